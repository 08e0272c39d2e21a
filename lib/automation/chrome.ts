import { chromeFlags } from '../browser/locate.js';
import type { CapabilitiesRequest } from './client.js';

export interface ChromeCapabilityOptions {
  binary: string;
  /** A fresh, empty folder for this session's profile; removed by whoever created it. */
  userDataDir: string;
  /** Page-load timeout of the session, in ms. */
  pageLoadTimeoutMs?: number;
  /** More Chromium flags, after ours. */
  extraArgs?: readonly string[];
  /** Ask chromedriver for its legacy (pre-W3C) protocol (send these as `desiredCapabilities`); only for tests and old tools. */
  legacyProtocol?: boolean;
}

/** The new-session capabilities for headless Chromium under chromedriver. */
export function chromeCapabilities(options: ChromeCapabilityOptions): CapabilitiesRequest {
  return {
    alwaysMatch: {
      browserName: 'chrome',
      pageLoadStrategy: 'normal',
      // A page that opens alert() or confirm() must not block the check: such prompts are dismissed.
      unhandledPromptBehavior: 'dismiss',
      timeouts: { pageLoad: options.pageLoadTimeoutMs ?? 30_000, script: 10_000, implicit: 0 },
      'goog:chromeOptions': {
        binary: options.binary,
        args: chromeFlags([`--user-data-dir=${options.userDataDir}`, ...(options.extraArgs ?? [])]),
        ...(options.legacyProtocol ? { w3c: false } : {}),
      },
    },
  };
}
