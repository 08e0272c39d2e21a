// The library's public surface. Each area adds its exports here.
export * from './errors.js';
export * from './http/index.js';
export { createLogger, getLogger, setLogger, silentLogger } from './log.js';
export type { Logger, LogLevel } from './log.js';
export { version } from './version.js';
export { offlineChromeFlags, resolveChromePath, resolveChromeDriverPath, BrowserLaunchError } from './browser/index.js';
export {
  runBrowserCheck,
  renderBrowserCheck,
  browserCheckProblems,
  startChromeDriver,
  withChromeDriver,
  createWebDriverClient,
  withSession,
  Session as WebDriverSession,
  WebDriverError,
  DriverProcessError,
  isWebDriverError,
  webDriverErrorStatus,
} from './automation/index.js';
export type {
  BrowserCheckOptions,
  BrowserCheckResult,
  BrowserCheckItem,
  BrowserCheckProblem,
  ChromeDriver,
  ChromeDriverOptions,
  WebDriverClient,
  WebDriverErrorCode,
} from './automation/index.js';
// Secrets: the kv engine client (also as the `secrets` namespace).
export * as secrets from './secrets/index.js';
export { SecretsClient, createSecretsClient, KvEngine, SecretsError, SecretsConnectionError, SecretsPathError, SecretsLimitError, SecretsConfigError, SecretsNoTokenError } from './secrets/index.js';
export type { SecretsClientOptions, KvReadResult, KvWriteResult, KvMetadata, KvVersion } from './secrets/index.js';
// Page analysis: the v5 model, the engines, gates and reports (also as the `analysis` namespace).
export * as analysis from './analysis/index.js';
export { runGate, createEngine, createLocalEngine, createRemoteEngine, createPageanalysisClient, parsePageanalysisResponse, renderGateTable, PageanalysisApiError, PageanalysisResponseError } from './analysis/index.js';
export type { GateOptions, GateResult, CheckResult, PageanalysisApiResponse, BeaconResult, AnalysisEngine, Threshold, AggregationMethod } from './analysis/index.js';
// Modules: addresses, constraints, discovery, the registry API, locations, the lock file, pin/install/verify, and
// fetching sources safely (also as the `registry` and `sources` namespaces).
export * as registry from './registry/index.js';
export * as sources from './sources/index.js';
export {
  RegistryClient, parseModuleAddress, parseConstraints, selectVersion, parseLocation, resolveAddress, pin, install, verify,
  readManifest, readLockFile, writeLockFile, registryRetryPolicy,
} from './registry/index.js';
export type { ModuleAddress, SourceLocation, LockFile, LockEntry, ManifestModule, ModuleRecord, ModuleDetail } from './registry/index.js';
export { fetchSource, hashTree, SourceRefusedError } from './sources/index.js';
// Platform: the REST client that keeps the platform's primary and secondary rate limits, app installation tokens, and commit statuses.
export * as platform from './platform/index.js';
export { PlatformClient, PlatformApiError, PlatformCredentialsError, PlatformRateLimitError, MemoryBudgetStore, createCommitStatus, listCommitStatuses, platformRetryPolicy, defaultPlatformLimits } from './platform/index.js';
export { RedisBudgetStore, PlatformLimitsStoreError, PlatformApp } from './platform/index.js';
export type { PlatformClientOptions, PlatformRequestOptions, PlatformResponse, PlatformLimits, BudgetStore, Clock as PlatformClock, Identity as PlatformIdentity, CommitStatus, CommitStatusInput, PlatformAppOptions, InstallationToken, PlatformTokenSource } from './platform/index.js';
// Webhooks: the receiver (verified deliveries, the event catalogue, a job queue) and deployment protection by gates.
export * as webhooks from './webhooks/index.js';
export { WebhookReceiver, MemoryQueue, RedisQueue, WebhookDeliveryError, WebhookQueueError, webhookEvents } from './webhooks/index.js';
export { loadHooksConfig } from './webhooks/config.js';
export { deploymentProtection, deploymentStatusGate } from './webhooks/protection.js';
export type { ReceiverOptions, WebhookContext, WebhookHandler, JobQueue, WebhookJob, HooksConfig, ProtectionOptions, DeploymentProtectionRulePayload } from './webhooks/index.js';
// Device login: the OAuth 2.0 device grant (Google's dialect and RFC 8628), tokens that refresh, where they are kept.
export * as auth from './auth/index.js';
export { deviceLogin, AuthSession, DeviceLoginError, resolveScopes, openTokenStore, openProfileLogin, saveLogin } from './auth/index.js';
export type { DeviceCode, DeviceLoginOptions, DeviceLoginResult, TokenSet, StoredLogin, TokenStore } from './auth/index.js';
// Storage: the storage API v2 client — all 70 methods, paging, retries, changes and push notifications (also as the
// `storage` namespace).
export * as storage from './storage/index.js';
export { StorageClient, createStorageClient, createChannelReceiver, StorageError, storageRetryPolicy } from './storage/index.js';
export type { StorageClientOptions, StorageTokenSource, StorageMethods, ChannelReceiver, ChannelNotification, Watch } from './storage/index.js';
// The context server (MCP) behind OAuth 2.1, and the client that signs in to protected context servers.
export * as mcp from './mcp/index.js';
export { startContextServer, connectContextServer, canonicalResourceUri, ContextClientError } from './mcp/index.js';
export type { ContextServer, ContextServerOptions, ConnectOptions as ContextClientOptions, ContextServerConnection } from './mcp/index.js';
