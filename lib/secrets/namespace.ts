import { SecretsPathError } from './errors.js';
import { pathSegments } from './paths.js';

/**
 * Namespaces (SEC-NS-RELATIVE, SEC-NS-EQUIVALENCE, SEC-NS-SPLIT-PREFIX). The service resolves a request path relative
 * to the `X-Secrets-Namespace` header, so header `ns1/ns2/` + path `secret/foo` is the same request as path
 * `ns1/ns2/secret/foo` with no header, and any split between the two. The client keeps one canonical form:
 * `ns1/ns2/` (no leading slash, one trailing slash, no empty segments) or undefined for the root namespace.
 */
export function normaliseNamespace(namespace: string | undefined | null): string | undefined {
  if (namespace === undefined || namespace === null) return undefined;
  const trimmed = namespace.trim();
  if (trimmed === '' || trimmed === '/') return undefined;
  // Several slashes between names are tolerated here (users paste `ns1//ns2`), unlike in secret paths.
  const segments = trimmed.split('/').filter((s) => s !== '');
  for (const segment of segments) {
    if (segment === '..' || segment === '.' || segment.endsWith('.')) {
      throw new SecretsPathError(`namespace "${namespace}" has an invalid segment "${segment}"; nothing was sent`, namespace);
    }
  }
  return segments.length === 0 ? undefined : `${segments.join('/')}/`;
}

/** A child namespace relative to a parent (a resource's namespace is relative to the client's, as in Terraform's vault provider). */
export function joinNamespaces(parent: string | undefined, child: string | undefined): string | undefined {
  const p = normaliseNamespace(parent);
  const c = normaliseNamespace(child);
  if (!p) return c;
  if (!c) return p;
  return `${p}${c}`;
}

/**
 * The full path a request addresses: namespace prefix + path. Two requests with the same full path are the same
 * request, whatever the split; caches (mount versions) are keyed by it.
 */
export function fullPath(namespace: string | undefined, path: string): string {
  const ns = normaliseNamespace(namespace) ?? '';
  const p = path.startsWith('/') ? path.slice(1) : path;
  return `${ns}${p}`;
}

/**
 * Move `depth` leading segments of a path into the namespace (or, with a negative depth, the last segments of the
 * namespace into the path). Used to send a request in a chosen split; the service treats all splits alike.
 */
export function resplit(namespace: string | undefined, path: string, namespaceSegments: number): { namespace: string | undefined; path: string } {
  const all = [...(normaliseNamespace(namespace)?.split('/').filter(Boolean) ?? []), ...pathSegments(path, { directory: true })];
  const trailing = path.endsWith('/') && all.length > 0 ? '/' : '';
  if (namespaceSegments < 0 || namespaceSegments > all.length) {
    throw new SecretsPathError(`cannot put ${namespaceSegments} segments of "${fullPath(namespace, path)}" in the namespace`, path);
  }
  const ns = all.slice(0, namespaceSegments);
  const rest = all.slice(namespaceSegments);
  return { namespace: ns.length ? `${ns.join('/')}/` : undefined, path: rest.length ? `${rest.join('/')}${trailing}` : '' };
}
