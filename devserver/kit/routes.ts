// A route table: method + path template (`/repos/{owner}/{repo}`) to whatever a server keeps per route (a handler,
// a cost, a name). Routes are tried in order, so a literal path listed first wins over a template that also fits.

export interface RouteEntry {
  /** A method, or `*` for any method (a route that answers the methods listed before it do not). */
  method: string;
  /** Slash-separated; a `{name}` segment matches one non-empty segment, percent-decoded, as params.name. */
  template: string;
}

export interface RouteOptions {
  /** A trailing slash is dropped before matching (`/user/` is `/user`). Default: the path must match as sent. */
  ignoreTrailingSlash?: boolean;
  /** Literal segments are compared percent-decoded too (`/%72epos` is `/repos`). Default: compared as sent. */
  decodeLiterals?: boolean;
  /** HEAD is served by a GET route. Default: true; false leaves HEAD to the routes that name it (or `*`). */
  headAsGet?: boolean;
}

export type RouteResult<R> = { route: R; params: Record<string, string> } | { allowed: string[] };

export class RouteTable<R extends RouteEntry> {
  private readonly compiled: Array<{ route: R; parts: string[] }>;

  constructor(
    routes: readonly R[],
    private readonly options: RouteOptions = {},
  ) {
    this.compiled = routes.map((route) => ({ route, parts: route.template.split('/') }));
  }

  /** The first route whose template and method fit (HEAD is served by GET unless told not to); else the methods the path has. */
  match(method: string, pathname: string): RouteResult<R> {
    const segments = pathname.split('/');
    if (this.options.ignoreTrailingSlash && segments.length > 2 && segments[segments.length - 1] === '') segments.pop();
    const allowed: string[] = [];
    for (const { route, parts } of this.compiled) {
      const params = this.fit(parts, segments);
      if (!params) continue;
      if (route.method === method || route.method === '*' || (method === 'HEAD' && route.method === 'GET' && this.options.headAsGet !== false))
        return { route, params };
      allowed.push(route.method);
    }
    return { allowed };
  }

  private fit(parts: string[], segments: string[]): Record<string, string> | undefined {
    if (parts.length !== segments.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      const raw = segments[i]!;
      if (part.startsWith('{')) {
        if (raw === '') return undefined;
        const value = decode(raw);
        if (value === undefined || value === '') return undefined;
        params[part.slice(1, -1)] = value;
      } else if (part !== (this.options.decodeLiterals ? decode(raw) : raw)) return undefined;
    }
    return params;
  }
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
