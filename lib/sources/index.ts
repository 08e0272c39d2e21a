export { fetchSource, type FetchOptions, type FetchResult, type FetchProgress } from './fetch.js';
export { hashTree } from './hash.js';
export { extractArchive, sniffArchiveType } from './archive.js';
export { fetchGit, GitError } from './git.js';
export { defaultLimits, SourceRefusedError, type ExtractLimits } from './limits.js';
export type * from './location.js';
