// The local Chromium and its driver: where they are, the flags that keep them offline, and clean-up on exit.
export { chromeFlags, offlineChromeFlags, resolveChromePath, resolveChromeDriverPath, BrowserLaunchError } from './locate.js';
export { registerEmergencyCleanup } from '../cleanup.js';
export { killProcessesNaming } from './processes.js';
