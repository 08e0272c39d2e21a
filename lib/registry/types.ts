/** Response shapes of the module registry API (spec §B). Fields marked optional may be trimmed (REG-CONTENT-TRIMMED). */

/** REG-MOD-*: an item of `modules` in list and search responses, and the top of a module detail. */
export interface ModuleRecord {
  /** `<namespace>/<name>/<provider>/<version>` (REG-MOD-ID). */
  id: string;
  owner?: string;
  namespace: string;
  name: string;
  version: string;
  provider: string;
  description?: string;
  source?: string;
  /** RFC 3339 with fractional seconds. */
  published_at?: string;
  downloads?: number;
  verified?: boolean;
}

export interface ModuleInput {
  name: string;
  description?: string;
  default?: string;
}

export interface ModuleOutput {
  name: string;
  description?: string;
}

/** REG-CONTENT-*: the module-content object. */
export interface ModuleContent {
  path?: string;
  readme?: string;
  empty?: boolean;
  inputs?: ModuleInput[];
  outputs?: ModuleOutput[];
  dependencies?: unknown[];
  resources?: Array<{ name: string; type: string }>;
}

/** REG-DETAIL-*: module detail. */
export interface ModuleDetail extends ModuleRecord {
  root?: ModuleContent;
  submodules?: ModuleContent[];
  providers?: string[];
  versions?: string[];
}

/** REG-META-*: pagination block. */
export interface PageMeta {
  limit?: number;
  current_offset?: number;
  next_offset?: number;
  prev_offset?: number;
  next_url?: string;
}

export interface ModulePage {
  meta: PageMeta;
  modules: ModuleRecord[];
}

/** REG-VERSIONS-*: versions response. */
export interface VersionsResponse {
  modules: Array<{
    source?: string;
    versions: Array<{
      version: string;
      root?: { dependencies?: unknown[]; providers?: unknown[] };
      submodules?: Array<{ path?: string; providers?: unknown[]; dependencies?: unknown[] }>;
    }>;
  }>;
}

/** REG-DLSUM-*: downloads summary. */
export interface DownloadsSummary {
  data: {
    type: 'module-downloads-summary';
    id: string;
    attributes: { week: number; month: number; year: number; total: number };
  };
}

export interface ListOptions {
  /** Restrict to one namespace (list) or pass `namespace` (search). */
  namespace?: string;
  provider?: string;
  /** Only `true` filters (REG-PARAM-VERIFIED); false or absent returns everything. */
  verified?: boolean;
  /** Page size asked for; the registry may apply less (REG-META-LIMIT). */
  limit?: number;
  offset?: number;
  /** Stop after this many items in total. */
  max?: number;
}

export interface SearchOptions extends ListOptions {
  query: string;
}
