export { createWebDriverClient, withSession, Session } from './client.js';
export type { WebDriverClient, WebDriverClientOptions, CapabilitiesRequest, DriverStatus, HttpMethod } from './client.js';
export { startChromeDriver, withChromeDriver } from './driver.js';
export type { ChromeDriver, ChromeDriverOptions, SessionOptions } from './driver.js';
export { chromeCapabilities } from './chrome.js';
export type { ChromeCapabilityOptions } from './chrome.js';
export {
  WebDriverError,
  DriverProcessError,
  isWebDriverError,
  isWebDriverErrorCode,
  webDriverErrorStatus,
  webDriverErrorCodes,
  codeForLegacyStatus,
} from './errors.js';
export type { WebDriverErrorCode, WebDriverErrorDetails } from './errors.js';
export { interpretAnswer, commandValue, parseNewSession } from './protocol.js';
export type { RemoteAnswer, NewSessionResult } from './protocol.js';
export {
  runBrowserCheck,
  validateBrowserCheckOptions,
  browserCheckProblems,
  renderBrowserCheck,
  defaultPageLoadTimeoutMs,
  defaultTitleWaitMs,
  maxBrowserWaitMs,
} from './check.js';
export type { BrowserCheckOptions, BrowserCheckResult, BrowserCheckItem, BrowserCheckProblem, TitleMatch, ExpectedStatus, StatusSource } from './check.js';
