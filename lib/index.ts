// The public API: what `import … from 'gantry'` gives, each name listed on purpose (docs/api.md lists them; a name
// added or removed here fails test/architecture/public-api.test.ts until its snapshot says so). An area's entry point
// (lib/<area>/index.ts) is its internal face — for the command, the providers and the other areas — not this.

// Errors and exit codes, logging, redaction, the version.
export { GantryError, UsageError, CheckFailedError, ExitCode, isGantryError, cliHintOf } from './errors.js';
export type { GantryErrorOptions, ExitCodeValue } from './errors.js';
export { createLogger, getLogger, setLogger, silentLogger } from './log.js';
export type { Logger, LogLevel } from './log.js';
export { redact, redactUrl, registerSecret } from './redact.js';
export { onWait, describeWait } from './waits.js';
export type { WaitNotice } from './waits.js';
export { version } from './version.js';

// The HTTP core, for a client of another service built as Gantry's are: retry policies as data, typed errors.
export { createHttpClient, HttpError, NetworkError, ProtocolError, definePolicy, defaultRetryPolicy, noRetry } from './http/index.js';
export type {
  HttpClient,
  HttpClientOptions,
  RequestOptions,
  HttpResponse,
  StreamOptions,
  StreamResponse,
  DownloadResult,
  DownloadProgress,
  PaginateOptions,
  PageContext,
  SearchParams,
  Timeouts,
  RetryNotice,
  RetryPolicy,
  Backoff,
  TlsOptions,
  ProxySettings,
} from './http/index.js';

// The local browser and browser checks.
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

// Secrets: the kv engine client.
export {
  SecretsClient,
  createSecretsClient,
  KvEngine,
  SecretsError,
  SecretsConnectionError,
  SecretsPathError,
  SecretsLimitError,
  SecretsConfigError,
  SecretsNoTokenError,
} from './secrets/index.js';
export type { SecretsClientOptions, KvReadResult, KvWriteResult, KvMetadata, KvVersion } from './secrets/index.js';

// Page analysis: engines, gates and reports (all of them in the `analysis` namespace).
export * as analysis from './analysis/public.js';
export {
  runGate,
  createEngine,
  createLocalEngine,
  createRemoteEngine,
  createPageanalysisClient,
  parsePageanalysisResponse,
  renderGateTable,
  PageanalysisApiError,
  PageanalysisResponseError,
} from './analysis/public.js';
export type {
  GateOptions,
  GateResult,
  CheckResult,
  PageanalysisApiResponse,
  BeaconResult,
  AnalysisEngine,
  Threshold,
  AggregationMethod,
} from './analysis/public.js';

// Modules: addresses, constraints, the registry API, the lock file, pin/install/verify, and fetching sources safely.
export {
  RegistryClient,
  parseModuleAddress,
  parseConstraints,
  selectVersion,
  parseLocation,
  resolveAddress,
  pin,
  install,
  verify,
  readManifest,
  readLockFile,
  writeLockFile,
  registryRetryPolicy,
  AddressError,
} from './registry/index.js';
export type { ModuleAddress, SourceLocation, LockFile, LockEntry, ManifestModule, ModuleRecord, ModuleDetail } from './registry/index.js';
export { fetchSource, hashTree, SourceRefusedError } from './sources/index.js';

// Platform: the REST client within the platform's rate limits, app installation tokens, commit statuses.
export {
  PlatformClient,
  PlatformApiError,
  PlatformCredentialsError,
  PlatformRateLimitError,
  MemoryBudgetStore,
  createCommitStatus,
  listCommitStatuses,
  platformRetryPolicy,
  defaultPlatformLimits,
} from './platform/index.js';
export { RedisBudgetStore, PlatformLimitsStoreError, PlatformApp } from './platform/index.js';
export type {
  PlatformClientOptions,
  PlatformRequestOptions,
  PlatformResponse,
  PlatformLimits,
  BudgetStore,
  Clock as PlatformClock,
  Identity as PlatformIdentity,
  CommitStatus,
  CommitStatusInput,
  PlatformAppOptions,
  InstallationToken,
  PlatformTokenSource,
} from './platform/index.js';

// Webhooks: the receiver, its queues and deployment protection by gates (all of them in the `webhooks` namespace).
export * as webhooks from './webhooks/public.js';
export {
  WebhookReceiver,
  MemoryQueue,
  RedisQueue,
  WebhookDeliveryError,
  WebhookQueueError,
  deploymentProtection,
  deploymentStatusGate,
  loadHooksConfig,
  webhookEvents,
} from './webhooks/public.js';
export type {
  ReceiverOptions,
  WebhookContext,
  WebhookHandler,
  JobQueue,
  WebhookJob,
  HooksConfig,
  ProtectionOptions,
  DeploymentProtectionRulePayload,
} from './webhooks/public.js';

// Device login: the OAuth 2.0 device grant, tokens that refresh, where they are kept (all of it in the `auth` namespace).
export * as auth from './auth/public.js';
export { deviceLogin, AuthSession, DeviceLoginError, resolveScopes, openTokenStore, openProfileLogin, saveLogin } from './auth/public.js';
export type { DeviceCode, DeviceLoginOptions, DeviceLoginResult, TokenSet, StoredLogin, TokenStore } from './auth/public.js';

// Storage: the storage API v2 client — all 70 methods, paging, retries, uploads, changes and push notifications.
export { StorageClient, createStorageClient, createChannelReceiver, StorageError, storageRetryPolicy, STORAGE_METHODS } from './storage/index.js';
export type { StorageClientOptions, StorageTokenSource, StorageMethods, ChannelReceiver, ChannelNotification, Watch } from './storage/index.js';

// The context server (MCP) behind OAuth 2.1, and the client that signs in to one (all of it in the `mcp` namespace).
export * as mcp from './mcp/public.js';
export { startContextServer, connectContextServer, canonicalResourceUri, ContextClientError } from './mcp/public.js';
export type { ContextServer, ContextServerOptions, ConnectOptions as ContextClientOptions, ContextServerConnection } from './mcp/public.js';
