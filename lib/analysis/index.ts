/** Page analysis: the v5 result model, the remote and local engines, gate evaluation and reports. */
export * from './enums.js';
export * from './model.js';
export * from './thresholds.js';
export * from './aggregate.js';
export * from './evaluate.js';
export * from './engine.js';
export * from './gate.js';
export * from './report.js';
export * from './config.js';
export { createRemoteEngine, createPageanalysisClient, PageanalysisApiError, pageanalysisRetryPolicy, RUN_PATH } from './remote.js';
export type { RemoteEngineOptions, RunPageanalysisParams, PageanalysisClient } from './remote.js';
export { createLocalEngine, LocalEngineError, lighthouseResultToResponse, responseToLighthouseResult } from './local.js';
export type { LocalEngineOptions } from './local.js';
export { launchBrowser, resolveChromePath, liveBrowserCount, BrowserLaunchError } from './chrome.js';
export type { Browser, LaunchOptions } from './chrome.js';
export { AUDIT_IDS, AUDITS_BY_CATEGORY, NON_NAVIGATION_AUDITS, auditCategories, auditUnit, isKnownAudit, closeMatches } from './audits.js';
export { findLhciConfig, loadLhciConfig, lhciToGate, LHCI_CONFIG_FILES, LHCI_PRESETS } from './lhci.js';
export type { LhciGateConfig } from './lhci.js';
