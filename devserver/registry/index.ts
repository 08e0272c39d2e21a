export { startRegistryServer, type RegistryServer, type RegistryServerOptions, type RecordedRequest } from './server.js';
export { type Fault, checkFault, FaultError } from '../kit/faults.js';
export { DEFAULT_PAGE_LIMITS, type PageLimits } from './api.js';
export { CatalogError } from './catalog.js';
export { parseS3Url, type S3StoreOptions } from './s3-options.js';
export { writeSyntheticModules, type SyntheticModulesOptions } from './synthetic.js';
export { startExampleRegistry, devRegistryPort, DEV_REGISTRY_PORT } from './starter.js';
