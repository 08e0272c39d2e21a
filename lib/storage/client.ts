/**
 * The storage API client: the 70 methods as namespaces (`client.files.get({ fileId })`, `client.permissions.insert`,
 * list methods with `.all()`), watch helpers, and `close()`. Base URL and token come from the options, else from
 * STORAGE_BASE_URL and STORAGE_TOKEN; an `AuthSession` (gantry auth's device login) is a token source too.
 */
import { download, type DownloadOptions, type DownloadResult } from './download.js';
import { exportFile, type ExportOptions, type ExportResult } from './export.js';
import { resumeUpload, upload, type ResumeOptions, type UploadedFile, type UploadOptions } from './upload/index.js';
import { expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import type { AccessTokenSession, Credentials } from '../http/index.js';
import { optionKeys, refuseUnknownOptions, settingsReader, type SettingSpec } from '../settings.js';
import { createMethods, type StorageMethods } from './methods.js';
import { createStorageTransport, type StorageTransport, type StorageTransportOptions } from './transport.js';
import {
  keepWatchingChanges,
  keepWatchingFile,
  watchChanges,
  watchFile,
  type KeepWatchingChangesOptions,
  type KeepWatchingFileOptions,
  type RenewingWatch,
  type Watch,
  type WatchChangesOptions,
  type WatchFileOptions,
} from './watch.js';

/** The transport's options (retry — default storageRetryPolicy —, logger, proxy …), with base URL and token optional. */
export interface StorageClientOptions extends Omit<StorageTransportOptions, 'baseUrl' | 'token'> {
  /** The service root; default STORAGE_BASE_URL. https, or http on loopback. */
  baseUrl?: string;
  /** A bearer token or a source of them (`Credentials`, an AuthSession); default STORAGE_TOKEN. */
  token?: string | Credentials | AccessTokenSession;
  /** Share a transport (and its connections) instead of making one; baseUrl and token are then its own. */
  transport?: StorageTransport;
}

/** Where the base URL and token are read besides the options (lib/settings.ts: options, environment, Pulumi config). */
export const storageSettings = {
  baseUrl: { env: 'STORAGE_BASE_URL', pulumi: 'gantry:storageBaseUrl' },
  token: { env: 'STORAGE_TOKEN' },
} as const satisfies Record<string, SettingSpec>;

const storageClientOptionKeys = optionKeys<StorageClientOptions>({
  baseUrl: true,
  token: true,
  transport: true,
  retry: true,
  logger: true,
  userAgent: true,
  proxy: true,
  timeouts: true,
  onRetry: true,
});

function resolveTransport(where: string, options: StorageClientOptions | undefined): { transport: StorageTransport; owned: boolean } {
  expectOptions(where, options as unknown);
  refuseUnknownOptions(where, options, storageClientOptionKeys);
  if (options?.transport !== undefined) {
    expectObject(where, 'options.transport', options.transport, 'a storage transport (createStorageTransport)');
    if (typeof options.transport.request !== 'function' || typeof options.transport.list !== 'function') {
      throw new UsageError(`${where}: options.transport must be a storage transport (createStorageTransport)`, { code: 'INVALID_ARGUMENT' });
    }
    return { transport: options.transport, owned: false };
  }
  const settings = settingsReader(storageSettings);
  const baseUrl = settings.pick('baseUrl', options?.baseUrl)?.value;
  expectString(where, 'options.baseUrl', baseUrl, 'the service root URL (or set STORAGE_BASE_URL)');
  const token = settings.pick('token', options?.token)?.value as StorageClientOptions['token'];
  if (typeof token === 'string') expectString(where, 'options.token', token.trim(), 'a bearer token (or set STORAGE_TOKEN, or pass an AuthSession)');
  else if (
    !token ||
    typeof token !== 'object' ||
    (typeof (token as AccessTokenSession).getAccessToken !== 'function' && typeof (token as Credentials).token !== 'function')
  ) {
    throw new UsageError(
      `${where}: options.token must be a bearer token or an object with getAccessToken() (an AuthSession) or token() (Credentials), got ${token === undefined ? 'nothing' : typeof token}`,
      {
        code: 'INVALID_ARGUMENT',
        hint: 'set STORAGE_TOKEN, or log in with `gantry auth login --scope storage.file` and pass the session',
      },
    );
  }
  if (options?.onRetry !== undefined && typeof options.onRetry !== 'function')
    throw new UsageError(`${where}: options.onRetry must be a function`, { code: 'INVALID_ARGUMENT' });
  for (const name of ['retry', 'proxy', 'timeouts'] as const) {
    if (options?.[name] !== undefined) expectObject(where, `options.${name}`, options[name]);
  }
  // The transport's own options pass as given (those set: exactOptionalPropertyTypes), the client's stay here.
  const passed = Object.entries(options ?? {}).filter(([key, value]) => value && key !== 'transport' && key !== 'baseUrl' && key !== 'token');
  const transport = createStorageTransport({ ...(Object.fromEntries(passed) as Partial<StorageTransportOptions>), baseUrl, token });
  return { transport, owned: true };
}

/** The namespaces of the table's methods (`files`, `permissions` …), as read-only members the constructor sets. */
const WithStorageMethods = class {} as new () => Readonly<StorageMethods>;

export class StorageClient extends WithStorageMethods implements StorageMethods {
  readonly transport: StorageTransport;
  readonly #owned: boolean;

  constructor(options?: StorageClientOptions) {
    super();
    const { transport, owned } = resolveTransport(calledAs ?? 'StorageClient', options);
    this.transport = transport;
    this.#owned = owned;
    Object.assign(this, createMethods(transport));
  }

  /** The service root (without `/storage/v2`). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** Registers a changes.watch channel (a random id and token) and tells `options.receiver` about it first. */
  watchChanges(options: WatchChangesOptions): Promise<Watch> {
    return watchChanges(this, options, 'StorageClient.watchChanges');
  }

  /** Registers a files.watch channel for one file, as watchChanges does. */
  watchFile(options: WatchFileOptions): Promise<Watch> {
    return watchFile(this, options, 'StorageClient.watchFile');
  }

  /** watchChanges for as long as it runs: each channel replaced by a new one before it expires (see docs/storage.md). */
  keepWatchingChanges(options: KeepWatchingChangesOptions): Promise<RenewingWatch> {
    return keepWatchingChanges(this, options, 'StorageClient.keepWatchingChanges');
  }

  /** watchFile for as long as it runs, renewed as keepWatchingChanges is. */
  keepWatchingFile(options: KeepWatchingFileOptions): Promise<RenewingWatch> {
    return keepWatchingFile(this, options, 'StorageClient.keepWatchingFile');
  }

  /** Uploads a file or new content for one (`fileId`): media, multipart, or resumable above 5 MB (see `upload`). */
  upload(options: UploadOptions): Promise<UploadedFile> {
    return upload(this.transport, options);
  }

  /** Finishes an upload a session file describes, after the process that began it died (see `resumeUpload`). */
  resumeUpload(sessionFile: string, options?: ResumeOptions): Promise<UploadedFile> {
    return resumeUpload(this.transport, sessionFile, options);
  }

  /** Streams a file's content to `options.path`, resuming after a cut (see `download`). */
  download(fileId: string, options: DownloadOptions): Promise<DownloadResult> {
    return download(this.transport, fileId, options);
  }

  /** Streams files.export of a storage document to `options.path` (see `exportFile`). */
  exportFile(fileId: string, mimeType: string, options: ExportOptions): Promise<ExportResult> {
    return exportFile(this.transport, fileId, mimeType, options);
  }

  /** Releases the connections (a shared transport is left to its owner). */
  close(): void {
    if (this.#owned) this.transport.close();
  }
}

/** The name argument errors blame: the function the caller called. */
let calledAs: string | undefined;

export function createStorageClient(options?: StorageClientOptions): StorageClient {
  calledAs = 'createStorageClient';
  try {
    return new StorageClient(options);
  } finally {
    calledAs = undefined;
  }
}
