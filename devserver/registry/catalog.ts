// The registry's view of what it serves: modules, their versions and where each version's bytes live.
// Stores (folder, S3) produce this; the API only reads it.
import semver from 'semver';
import { UsageError } from '../../lib/errors.js';

/** Where the bytes of one module version are. */
export type Artifact =
  /** modifiedMs: when the folder or file last changed, so cached content and checksums follow edits. */
  | { kind: 'directory'; path: string; modifiedMs: number }
  | { kind: 'file'; path: string; extension: ArchiveExtension; modifiedMs: number }
  | { kind: 's3'; bucket: string; key: string; extension: ArchiveExtension; modifiedMs: number }
  /** A location declared in module.json, answered verbatim in X-Registry-Get. */
  | { kind: 'location'; location: string };

export const ARCHIVE_EXTENSIONS = ['.tar.gz', '.tgz', '.tar.bz2', '.tbz2', '.tar.xz', '.txz', '.tar', '.zip'] as const;
export type ArchiveExtension = (typeof ARCHIVE_EXTENSIONS)[number];

export interface DownloadCounts {
  week: number;
  month: number;
  year: number;
  total: number;
}

export interface VersionEntry {
  version: string;
  publishedAt: string;
  artifact: Artifact;
}

export interface ModuleEntry {
  namespace: string;
  name: string;
  provider: string;
  owner: string;
  description: string;
  source: string;
  verified: boolean;
  /** Downloads recorded before this server started (from module.json); live downloads are added on top. */
  downloads: DownloadCounts;
  /** Newest first (see sortVersions). */
  versions: VersionEntry[];
}

/** Namespace and name: 1–64 letters, digits, '-', '_', starting and ending with a letter or digit. */
export const NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,62}[A-Za-z0-9])?$/;
/** Provider: 1–64 lowercase letters and digits. */
export const PROVIDER_PATTERN = /^[a-z0-9]{1,64}$/;
/** Version names the server is willing to serve. Not all are semver: a client must skip those (with a warning). */
export const VERSION_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,127}$/;

/** Why a namespace, module name or provider cannot be part of a module's address, in a warning's words; undefined when it can. */
export function addressProblem(part: 'namespace' | 'name' | 'provider', value: string): string | undefined {
  if (part === 'provider') return PROVIDER_PATTERN.test(value) ? undefined : 'provider must be 1-64 lowercase letters and digits';
  return NAME_PATTERN.test(value) ? undefined : `"${value}" is not a valid ${part === 'name' ? 'module name' : 'namespace'}`;
}

export function moduleKey(namespace: string, name: string, provider: string): string {
  return `${namespace}/${name}/${provider}`.toLowerCase();
}

/** Valid semver newest first; names that are not semver last, in name order. */
export function sortVersions<T extends { version: string }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => {
    const va = semver.valid(a.version);
    const vb = semver.valid(b.version);
    if (va && vb) return semver.rcompare(va, vb) || a.version.localeCompare(b.version);
    if (va) return -1;
    if (vb) return 1;
    return a.version.localeCompare(b.version);
  });
}

/** The newest release; a pre-release only when the module has nothing else. */
export function latestVersion(module: ModuleEntry): VersionEntry | undefined {
  const valid = module.versions.filter((v) => semver.valid(v.version));
  return valid.find((v) => semver.prerelease(v.version) === null) ?? valid[0] ?? module.versions[0];
}

/** A module folder, bucket or module.json the registry cannot serve: the operator's input is wrong. */
export class CatalogError extends UsageError {
  constructor(message: string) {
    super(message, { code: 'DEV_REGISTRY_CATALOG' });
  }
}

export interface ModuleMetadata {
  owner?: string;
  description?: string;
  source?: string;
  verified?: boolean;
  downloads?: Partial<DownloadCounts> | number;
  versions?: Record<string, { published_at?: string; location?: string }>;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses module.json strictly: a typo in a dev fixture should be an error naming the file, not a silent default. */
export function parseModuleMetadata(text: string, where: string): ModuleMetadata {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CatalogError(`${where}: not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(value)) throw new CatalogError(`${where}: must be a JSON object`);
  const known = new Set(['owner', 'description', 'source', 'verified', 'downloads', 'versions']);
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new CatalogError(`${where}: unknown field "${key}" (known: ${[...known].join(', ')})`);
  }
  for (const key of ['owner', 'description', 'source'] as const) {
    if (value[key] !== undefined && typeof value[key] !== 'string') throw new CatalogError(`${where}: "${key}" must be a string`);
  }
  if (value.verified !== undefined && typeof value.verified !== 'boolean') throw new CatalogError(`${where}: "verified" must be a boolean`);
  const downloads = value.downloads;
  if (downloads !== undefined) {
    if (typeof downloads === 'number') {
      if (!Number.isSafeInteger(downloads) || downloads < 0) throw new CatalogError(`${where}: "downloads" must be a non-negative integer`);
    } else if (isObject(downloads)) {
      for (const [k, n] of Object.entries(downloads)) {
        if (!['week', 'month', 'year', 'total'].includes(k)) throw new CatalogError(`${where}: "downloads.${k}" is not one of week, month, year, total`);
        if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new CatalogError(`${where}: "downloads.${k}" must be a non-negative integer`);
      }
    } else {
      throw new CatalogError(`${where}: "downloads" must be an integer or {week, month, year, total}`);
    }
  }
  if (value.versions !== undefined) {
    if (!isObject(value.versions)) throw new CatalogError(`${where}: "versions" must be an object keyed by version`);
    for (const [version, meta] of Object.entries(value.versions)) {
      if (!VERSION_NAME_PATTERN.test(version)) throw new CatalogError(`${where}: "versions" key "${version}" is not a usable version name`);
      if (!isObject(meta)) throw new CatalogError(`${where}: "versions.${version}" must be an object`);
      for (const key of Object.keys(meta)) {
        if (key !== 'published_at' && key !== 'location') throw new CatalogError(`${where}: unknown field "versions.${version}.${key}"`);
      }
      if (meta.published_at !== undefined && (typeof meta.published_at !== 'string' || !RFC3339.test(meta.published_at))) {
        throw new CatalogError(`${where}: "versions.${version}.published_at" must be an RFC 3339 timestamp`);
      }
      if (meta.location !== undefined && (typeof meta.location !== 'string' || meta.location === '')) {
        throw new CatalogError(`${where}: "versions.${version}.location" must be a non-empty string`);
      }
    }
  }
  return value as ModuleMetadata;
}

export function downloadCounts(downloads: ModuleMetadata['downloads']): DownloadCounts {
  if (downloads === undefined) return { week: 0, month: 0, year: 0, total: 0 };
  if (typeof downloads === 'number') return { week: 0, month: 0, year: 0, total: downloads };
  const total = downloads.total ?? Math.max(downloads.year ?? 0, downloads.month ?? 0, downloads.week ?? 0);
  return { week: downloads.week ?? 0, month: downloads.month ?? 0, year: downloads.year ?? 0, total };
}

/** One catalog entry from what a store found and its module.json (the text and where it was read), when there is one. */
export function moduleFrom(
  key: { namespace: string; name: string; provider: string },
  found: VersionEntry[],
  moduleJson?: { text: string; where: string },
): ModuleEntry {
  return buildModule(key, found, moduleJson ? parseModuleMetadata(moduleJson.text, moduleJson.where) : {});
}

function buildModule(key: { namespace: string; name: string; provider: string }, found: VersionEntry[], metadata: ModuleMetadata): ModuleEntry {
  const byVersion = new Map(found.map((v) => [v.version, v]));
  for (const [version, meta] of Object.entries(metadata.versions ?? {})) {
    const existing = byVersion.get(version);
    if (meta.location !== undefined) {
      byVersion.set(version, {
        version,
        publishedAt: meta.published_at ?? existing?.publishedAt ?? new Date(0).toISOString(),
        artifact: { kind: 'location', location: meta.location },
      });
    } else if (existing && meta.published_at) {
      byVersion.set(version, { ...existing, publishedAt: meta.published_at });
    }
  }
  return {
    ...key,
    owner: metadata.owner ?? '',
    description: metadata.description ?? '',
    source: metadata.source ?? '',
    verified: metadata.verified ?? false,
    downloads: downloadCounts(metadata.downloads),
    versions: sortVersions([...byVersion.values()]),
  };
}

/** Which archive extension a file name carries, if any. */
export function archiveExtension(fileName: string): ArchiveExtension | undefined {
  const lower = fileName.toLowerCase();
  return ARCHIVE_EXTENSIONS.find((ext) => lower.endsWith(ext));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
