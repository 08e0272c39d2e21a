export { createHttpClient } from './client.js';
export { nextLink, paginate } from './paginate.js';
export { joinHooks } from './send.js';
export type {
  HttpClient,
  HttpClientOptions,
  RequestOptions,
  HttpResponse,
  RetryNotice,
  StreamOptions,
  StreamResponse,
  DownloadResult,
  DownloadProgress,
  Timeouts,
  SearchParams,
  PaginateOptions,
  PageContext,
  HttpHooks,
  HookContext,
  AnswerHead,
} from './types.js';
export { createProxyAgents, noProxyMatcher, proxySettingsFromEnv } from './proxy.js';
export type { ProxyAgents, ProxyAgentOptions, ProxySettings } from './proxy.js';
export {
  HttpError,
  NetworkError,
  ProtocolError,
  ServiceError,
  httpHints,
  serviceErrors,
  type Hint,
  type HintTable,
  type HttpErrorDetails,
  type NetworkDiagnosis,
  type ServiceAnswer,
  type ServiceErrorDetails,
} from './errors.js';
export { decideRetry, definePolicy, defaultRetryPolicy, errorReasons, noRetry, networkErrorCodes, parseRetryAfter } from './retry.js';
export type { RetryPolicy, Backoff, RetryDecision } from './retry.js';
export { loadTlsOptions } from './tls.js';
export type { TlsOptions } from './tls.js';
export { redact, redactUrl, redactHeaders, registerSecret, REDACTED, sensitiveHeaders, sensitiveQueryParameters } from '../redact.js';
export { announceWait, clockTime, describeWait, longWaitMs, onWait, setWaitLimits, waitLimits } from '../waits.js';
export type { WaitLimits, WaitNotice } from '../waits.js';
export { bearerAuth, toCredentials } from './credentials.js';
export type { AccessTokenSession, BearerAuthOptions, Credentials, Refusal } from './credentials.js';
