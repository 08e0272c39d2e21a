// The registry protocol's answers, as pure functions of the catalog and the request.
// Route precedence where path shapes overlap (spec AMB-11): the literal segments `search`, `versions` and
// `download` win over the `:namespace` / `:version` placeholders.
import { latestVersion, moduleKey, type ModuleEntry, type VersionEntry } from './catalog.js';
import type { VersionContent } from './content.js';
import { HttpFailure } from '../kit/index.js';

/** Default and maximum page size of each list endpoint (REG-PAGE-DEFAULTS); deliberately not all alike. */
export interface PageLimits {
  list: { default: number; max: number };
  search: { default: number; max: number };
  providers: { default: number; max: number };
}

export const DEFAULT_PAGE_LIMITS: PageLimits = {
  list: { default: 15, max: 100 },
  search: { default: 10, max: 50 },
  providers: { default: 10, max: 25 },
};

/** A failure the registry answers as `{errors: [message]}` (REG-ERR-BODY). */
export class ApiError extends HttpFailure {}

export type Route =
  | { kind: 'list'; namespace?: string }
  | { kind: 'search' }
  | { kind: 'providers'; namespace: string; name: string }
  | { kind: 'latest'; namespace: string; name: string; provider: string }
  | { kind: 'versions'; namespace: string; name: string; provider: string }
  | { kind: 'download-latest'; namespace: string; name: string; provider: string }
  | { kind: 'version'; namespace: string; name: string; provider: string; version: string }
  | { kind: 'download'; namespace: string; name: string; provider: string; version: string }
  | { kind: 'summary'; namespace: string; name: string; provider: string };

/** Routes the segments after the v1 base (`/v1/modules/`). */
export function routeV1(segments: string[]): Route | undefined {
  const [a, b, c, d, e] = segments;
  switch (segments.length) {
    case 0:
      return { kind: 'list' };
    case 1:
      return a === 'search' ? { kind: 'search' } : { kind: 'list', namespace: a! };
    case 2:
      return { kind: 'providers', namespace: a!, name: b! };
    case 3:
      return { kind: 'latest', namespace: a!, name: b!, provider: c! };
    case 4:
      if (d === 'versions') return { kind: 'versions', namespace: a!, name: b!, provider: c! };
      if (d === 'download') return { kind: 'download-latest', namespace: a!, name: b!, provider: c! };
      return { kind: 'version', namespace: a!, name: b!, provider: c!, version: d! };
    case 5:
      return e === 'download' ? { kind: 'download', namespace: a!, name: b!, provider: c!, version: d! } : undefined;
    default:
      return undefined;
  }
}

/** Routes the segments after the v2 base (`/v2/modules/`). */
export function routeV2(segments: string[]): Route | undefined {
  const [a, b, c, d, e] = segments;
  if (segments.length === 5 && d === 'downloads' && e === 'summary') return { kind: 'summary', namespace: a!, name: b!, provider: c! };
  return undefined;
}

export interface Page {
  limit: number;
  offset: number;
}

/** offset/limit from the query: integers; limit ≥ 1 clamped to the maximum (REG-PAGE-MAX-CLAMP); offset ≥ 0 (AMB-07). */
export function readPage(query: URLSearchParams, limits: { default: number; max: number }): Page {
  const parse = (name: string, min: number, fallback: number): number => {
    const raw = query.get(name);
    if (raw === null || raw === '') return fallback;
    if (!/^\d+$/.test(raw)) throw new ApiError(400, `${name} must be a non-negative integer, got "${raw}"`);
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min) throw new ApiError(400, `${name} must be an integer of at least ${min}, got "${raw}"`);
    return value;
  };
  return { limit: Math.min(parse('limit', 1, limits.default), limits.max), offset: parse('offset', 0, 0) };
}

export interface Meta {
  limit: number;
  current_offset: number;
  next_offset?: number;
  prev_offset?: number;
  next_url?: string;
  prev_url?: string;
}

/** One page of items with its meta block; next_url keeps the caller's filters (absent on the last page, AMB-09). */
export function paginate<T>(items: T[], page: Page, pathname: string, query: URLSearchParams): { meta: Meta; items: T[] } {
  const meta: Meta = { limit: page.limit, current_offset: page.offset };
  const urlFor = (offset: number) => {
    const params = new URLSearchParams(query);
    params.set('limit', String(page.limit));
    params.set('offset', String(offset));
    return `${pathname}?${params.toString()}`;
  };
  if (page.offset + page.limit < items.length) {
    meta.next_offset = page.offset + page.limit;
    meta.next_url = urlFor(meta.next_offset);
  }
  if (page.offset > 0) {
    meta.prev_offset = Math.max(0, page.offset - page.limit);
    meta.prev_url = urlFor(meta.prev_offset);
  }
  return { meta, items: items.slice(page.offset, page.offset + page.limit) };
}

export interface ModuleRecord {
  id: string;
  owner: string;
  namespace: string;
  name: string;
  version: string;
  provider: string;
  description: string;
  source: string;
  published_at: string;
  downloads: number;
  verified: boolean;
}

export function moduleRecord(module: ModuleEntry, version: VersionEntry, downloads: number): ModuleRecord {
  return {
    id: `${module.namespace}/${module.name}/${module.provider}/${version.version}`,
    owner: module.owner,
    namespace: module.namespace,
    name: module.name,
    version: version.version,
    provider: module.provider,
    description: module.description,
    source: module.source,
    published_at: version.publishedAt,
    downloads,
    verified: module.verified,
  };
}

/** Module detail: the record plus root, submodules, providers of this module and versions of this provider. */
export function moduleDetail(module: ModuleEntry, version: VersionEntry, downloads: number, content: VersionContent, providers: string[]) {
  return {
    ...moduleRecord(module, version, downloads),
    root: content.root,
    submodules: content.submodules,
    providers,
    versions: module.versions.map((v) => v.version),
  };
}

/** The versions response (REG-VERSIONS-*): one module, no dependency modules supplied. */
export function versionsResponse(module: ModuleEntry, contentOf: (v: VersionEntry) => VersionContent | undefined) {
  return {
    modules: [
      {
        source: `${module.namespace}/${module.name}/${module.provider}`,
        versions: module.versions.map((v) => {
          const content = contentOf(v);
          const providersOf = (c: VersionContent['root'] | undefined) =>
            c && 'provider_dependencies' in c && c.provider_dependencies.length > 0
              ? c.provider_dependencies.map((p) => ({ name: p.name, version: p.version }))
              : [{ name: module.provider, version: '' }];
          const dependenciesOf = (c: VersionContent['root'] | undefined) => (c && 'dependencies' in c ? c.dependencies : []);
          return {
            version: v.version,
            root: { providers: providersOf(content?.root), dependencies: dependenciesOf(content?.root) },
            submodules: (content?.submodules ?? []).map((s) => ({ path: s.path, providers: providersOf(s), dependencies: dependenciesOf(s) })),
          };
        }),
      },
    ],
  };
}

/** Case-insensitive lookup, the way the public registry treats namespace and name. */
export function findModule(modules: Map<string, ModuleEntry>, namespace: string, name: string, provider: string): ModuleEntry {
  const module = modules.get(moduleKey(namespace, name, provider));
  if (!module) throw new ApiError(404, `module ${namespace}/${name}/${provider} not found`);
  return module;
}

export function findVersion(module: ModuleEntry, version: string): VersionEntry {
  const found = module.versions.find((v) => v.version === version);
  if (!found) throw new ApiError(404, `module ${module.namespace}/${module.name}/${module.provider} has no version ${version}`);
  return found;
}

export function requireLatest(module: ModuleEntry): VersionEntry {
  const latest = latestVersion(module);
  if (!latest) throw new ApiError(404, `module ${module.namespace}/${module.name}/${module.provider} has no versions`);
  return latest;
}

/** Filters shared by list and search (REG-PARAM-VERIFIED: only the exact value `true` restricts). */
export function applyFilters(modules: ModuleEntry[], query: URLSearchParams, namespace?: string): ModuleEntry[] {
  const provider = query.get('provider');
  const verifiedOnly = query.get('verified') === 'true';
  return modules.filter(
    (m) =>
      (namespace === undefined || m.namespace.toLowerCase() === namespace.toLowerCase()) &&
      (!provider || m.provider === provider.toLowerCase()) &&
      (!verifiedOnly || m.verified),
  );
}

/**
 * Search syntax (implementation-defined, REG-EP-SEARCH): whitespace-separated terms, all of which must appear
 * (case-insensitive) in the namespace, name, provider or description. Exact name matches rank first.
 */
export function search(modules: ModuleEntry[], q: string): ModuleEntry[] {
  const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = modules.filter((m) => {
    const haystack = `${m.namespace} ${m.name} ${m.provider} ${m.description}`.toLowerCase();
    return terms.every((t) => haystack.includes(t));
  });
  const exact = (m: ModuleEntry) => (terms.includes(m.name.toLowerCase()) ? 0 : 1);
  return matches.sort((a, b) => exact(a) - exact(b) || compareModules(a, b));
}

export function compareModules(a: ModuleEntry, b: ModuleEntry): number {
  return moduleKey(a.namespace, a.name, a.provider).localeCompare(moduleKey(b.namespace, b.name, b.provider));
}
