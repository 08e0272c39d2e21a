// The library's public surface. Each area adds its exports here.
export * from './errors.js';
export * from './http/index.js';
export { createLogger, getLogger, setLogger, silentLogger } from './log.js';
export type { Logger, LogLevel } from './log.js';
export { version } from './version.js';
