import { shown } from '../errors.js';
import { SecretsPathError } from './errors.js';

/**
 * Path rules, checked before anything is sent. The service reads a path parameter ending in a period as an
 * unsupported path (SEC-PATH-TRAILING-PERIOD) and proxies and routers may collapse empty or `..` segments into a
 * different path than the one asked for, so all three are refused here with a clear error.
 */

// Control characters have no business in a secret name and would be invisible in any error message.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const controlCharacter = /[\u0000-\u001f\u007f]/;
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export interface PathOptions {
  /** The path names a directory (list): a trailing `/` is allowed and the path may be empty. */
  directory?: boolean;
  /** What the path is, for error messages ("secret path", "mount"). */
  what?: string;
}

/** Split a user-given path into checked segments. One leading `/` is tolerated (as the Vault CLI does). */
export function pathSegments(input: string, options: PathOptions = {}): string[] {
  const what = options.what ?? 'secret path';
  if (typeof input !== 'string') throw new SecretsPathError(`${what} must be a string`, String(input));
  let path = input.startsWith('/') ? input.slice(1) : input;
  if (path.endsWith('/')) {
    if (!options.directory) {
      throw new SecretsPathError(`${what} "${input}" ends with "/", which names a directory; give a secret name (or use list for a directory)`, input);
    }
    path = path.slice(0, -1);
  }
  if (path === '') {
    if (options.directory) return [];
    throw new SecretsPathError(`${what} is empty`, input);
  }
  const segments = path.split('/');
  segments.forEach((segment, index) => checkSegment(segment, index, input, what));
  return segments;
}

function checkSegment(segment: string, index: number, input: string, what: string): void {
  const position = `segment ${index + 1}`;
  if (segment === '') throw new SecretsPathError(`${what} "${input}" has an empty ${position} ("//"); nothing was sent`, input);
  if (segment === '..' || segment === '.')
    throw new SecretsPathError(`${what} "${input}" has a "${segment}" ${position}; relative segments are refused, nothing was sent`, input);
  if (segment.endsWith('.'))
    throw new SecretsPathError(
      `${what} "${input}": ${position} "${segment}" ends in a period, which the service refuses as an unsupported path; nothing was sent`,
      input,
    );
  if (controlCharacter.test(segment)) throw new SecretsPathError(`${what} ${shown(input)} has a control character in ${position}; nothing was sent`, input);
  // Half of a UTF-16 pair alone has no UTF-8 form: encodeURIComponent would throw a bare URIError.
  if (loneSurrogate.test(segment))
    throw new SecretsPathError(`${what} ${shown(input)} has a character that is not valid Unicode in ${position}; nothing was sent`, input);
}

/** Encode checked segments for a URL path: each segment URL-encoded, joined with `/`. */
export function encodeSegments(segments: readonly string[]): string {
  return segments.map((segment) => encodeURIComponent(segment)).join('/');
}

/** Check and encode a path in one step. Directories keep their trailing `/`. */
export function encodePath(input: string, options: PathOptions = {}): string {
  const segments = pathSegments(input, options);
  const encoded = encodeSegments(segments);
  return options.directory && encoded !== '' ? `${encoded}/` : encoded;
}

/** A mount path in canonical form: checked segments and a trailing `/` (`secret` → `secret/`). */
export function normaliseMount(mount: string): string {
  const segments = pathSegments(mount, { directory: true, what: 'mount' });
  if (segments.length === 0) throw new SecretsPathError('mount is empty', mount);
  return `${segments.join('/')}/`;
}
