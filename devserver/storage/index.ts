export { startStorageServer, type StorageServer } from './server.js';
export { type StorageServerOptions, WEEK_MS } from './options.js';
export { type StorageFault, checkStorageFault } from './faults.js';
export { CHUNK_GRANULARITY } from './uploads.js';
