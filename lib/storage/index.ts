// The storage API v2 client (Drive v2 with `drive` renamed `storage`): all 70 methods, paging, errors and retries,
// changes and push notifications. Uploads, downloads and exports build on the same transport.
export { StorageClient, createStorageClient, storageSettings } from './client.js';
export type { StorageClientOptions } from './client.js';
export { createStorageTransport, storageRetryPolicy, storageBaseUrl, maxEmptyPages } from './transport.js';
export type { StorageTransport, StorageTransportOptions, StorageTokenSource, StorageRequest, StorageParams, StoragePage, ListOptions } from './transport.js';
export { StorageError, rateLimitReasons, toStorageError } from './errors.js';
export type { StorageErrorItem, StorageErrorDetails } from './errors.js';
export { upload, resumeUpload, CHUNK_UNIT, DEFAULT_CHUNK_SIZE, SIMPLE_UPLOAD_LIMIT, SESSION_FILE_KIND } from './upload/index.js';
export type { ResumeOptions, UploadedFile, UploadOptions, UploadProgress, UploadType, SessionFileContent, TransferRetry } from './upload/index.js';
export { download } from './download.js';
export type { DownloadOptions, DownloadResult, TransferProgress } from './download.js';
export { exportFile } from './export.js';
export type { ExportOptions, ExportResult } from './export.js';
export { STORAGE_METHODS } from './methods.js';
export type { MethodSpec, StorageMethodName, StorageMethods, StorageResource, ListMethod, ChangeIterator } from './methods.js';
export { createChannelReceiver, sameToken } from './channels.js';
export type { ChannelReceiver, ChannelReceiverOptions, ChannelNotification, ExpectedChannel, ResourceState } from './channels.js';
export { keepWatchingChanges, keepWatchingFile, renewalMarginMs } from './watch.js';
export type {
  Watch,
  WatchOptions,
  WatchChangesOptions,
  WatchFileOptions,
  KeepWatchingOptions,
  KeepWatchingChangesOptions,
  KeepWatchingFileOptions,
  RenewingWatch,
  WatchEvent,
  WatchedChannel,
} from './watch.js';
export { FOLDER_MIME, isServiceDocument } from './media-types.js';
export type * from './types.js';
export type * from './params.js';
