import { expectObject, expectOptions, expectString } from '../arguments.js';
import { ExitCode, GantryError } from '../errors.js';
import { cleanSubdir } from './address.js';
import { plainHttpAllowed } from './plain-http.js';
import type { ArchiveType, Checksum, ChecksumAlgorithm, GitLocation, HttpLocation, S3Location, SourceLocation } from '../sources/location.js';
import type { RegistryErrorCode } from './errors.js';

/**
 * Download locations as the registry's `X-Registry-Get` gives them (REG-DL-XGET-SYNTAX), interpreted as go-getter
 * does for the getters Gantry supports: http(s) archives, `s3::`, `git::`, `//subdir`, `?archive=`, `?checksum=`,
 * `?ref=`, `?depth=`. Values starting with `/`, `./` or `../` are URLs relative to the download endpoint
 * (REG-DL-XGET-RELATIVE). What the result is — the location types — belongs to the sources area
 * (lib/sources/location.ts), which fetches it; how the registry finds one is here.
 */

export class LocationError extends GantryError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'INVALID_LOCATION' satisfies RegistryErrorCode, exitCode: ExitCode.remote, ...(hint === undefined ? {} : { hint }) });
  }
}

export interface ParseLocationOptions {
  /** The full URL of the download endpoint, for relative values. */
  base?: string | URL;
  /** Local paths and file:// are accepted only when the location does not come from a remote registry. */
  trusted?: boolean;
  env?: NodeJS.ProcessEnv;
}

const checksumLengths: Record<number, ChecksumAlgorithm> = { 32: 'md5', 40: 'sha1', 64: 'sha256', 128: 'sha512' };
const checksumAlgorithms = new Set<ChecksumAlgorithm>(['md5', 'sha1', 'sha256', 'sha512']);

const archiveAliases: Record<string, ArchiveType> = {
  tar: 'tar',
  'tar.gz': 'tar.gz',
  tgz: 'tar.gz',
  'tar.bz2': 'tar.bz2',
  tbz2: 'tar.bz2',
  'tar.xz': 'tar.xz',
  txz: 'tar.xz',
  zip: 'zip',
};

/** Archive type by file extension of a path; undefined when it has none of the known ones. */
export function archiveTypeFromPath(path: string): ArchiveType | undefined {
  expectString('archiveTypeFromPath', 'path', path, 'a file name or path');
  const lower = path.toLowerCase();
  const match = Object.keys(archiveAliases)
    .sort((a, b) => b.length - a.length)
    .find((extension) => lower.endsWith(`.${extension}`));
  return match === undefined ? undefined : archiveAliases[match];
}

export function parseChecksum(value: string): Checksum {
  expectString('parseChecksum', 'value', value, 'a checksum such as "sha256:<hex>"');
  const colon = value.indexOf(':');
  let algorithm: string | undefined;
  let hex: string;
  if (colon === -1) {
    hex = value.toLowerCase();
    algorithm = checksumLengths[hex.length];
    if (algorithm === undefined) throw new LocationError(`the checksum "${value}" has ${hex.length} hex digits, which is no md5, sha1, sha256 or sha512`);
  } else {
    algorithm = value.slice(0, colon).toLowerCase();
    hex = value.slice(colon + 1).toLowerCase();
    if (algorithm === 'file')
      throw new LocationError('checksum files (checksum=file:...) are not supported', 'give the digest inline, e.g. checksum=sha256:<hex>');
    if (!checksumAlgorithms.has(algorithm as ChecksumAlgorithm))
      throw new LocationError(`the checksum type "${algorithm}" is not one of md5, sha1, sha256, sha512`);
    if (checksumLengths[hex.length] !== algorithm) throw new LocationError(`the ${algorithm} checksum "${hex}" has the wrong length`);
  }
  if (!/^[0-9a-f]+$/.test(hex)) throw new LocationError(`the checksum "${value}" is not hexadecimal`);
  return { algorithm: algorithm as ChecksumAlgorithm, hex };
}

/** Splits `url//subdir?query` (go-getter's SourceDirSubdir): the subdir's query belongs to the URL. */
function splitSubdir(value: string): { url: string; subdir: string } {
  const queryAt = value.indexOf('?');
  const beforeQuery = queryAt === -1 ? value : value.slice(0, queryAt);
  const query = queryAt === -1 ? '' : value.slice(queryAt);
  const schemeEnd = beforeQuery.indexOf('://');
  const from = schemeEnd === -1 ? 1 : schemeEnd + 3;
  const split = beforeQuery.indexOf('//', from);
  if (split === -1) return { url: value, subdir: '' };
  return { url: beforeQuery.slice(0, split) + query, subdir: beforeQuery.slice(split + 2) };
}

/** Joins the location's `//subdir` (which may be `*`) with the address's own subdir. */
export function joinSubdirs(locationSubdir: string, addressSubdir: string): string {
  if (typeof locationSubdir !== 'string') expectString('joinSubdirs', 'locationSubdir', locationSubdir, "a sub-directory ('' for none)");
  if (typeof addressSubdir !== 'string') expectString('joinSubdirs', 'addressSubdir', addressSubdir, "a sub-directory ('' for none)");
  const star = locationSubdir === '*' || locationSubdir.startsWith('*/');
  const rest = star ? locationSubdir.slice(1) : locationSubdir;
  const joined = cleanSubdir([rest, addressSubdir].filter(Boolean).join('/'), 'sub-directory');
  return star ? (joined ? `*/${joined}` : '*') : joined;
}

function cleanLocationSubdir(subdir: string): string {
  if (subdir === '*' || subdir.startsWith('*/')) return subdir === '*' ? '*' : `*/${cleanSubdir(subdir.slice(2), 'location sub-directory')}`;
  return cleanSubdir(subdir, 'location sub-directory');
}

function takeArchive(params: URLSearchParams, path: string): ArchiveType | 'none' | undefined {
  const given = params.get('archive');
  params.delete('archive');
  if (given === null) return archiveTypeFromPath(path);
  const lower = given.toLowerCase();
  if (lower === 'false') return 'none';
  const type = archiveAliases[lower];
  if (!type) throw new LocationError(`the archive type "${given}" is not one of tar, tar.gz, tgz, tar.bz2, tbz2, tar.xz, txz, zip`);
  return type;
}

function takeChecksum(params: URLSearchParams): Checksum | undefined {
  const given = params.get('checksum');
  params.delete('checksum');
  return given === null || given === '' ? undefined : parseChecksum(given);
}

function parseUrl(text: string, what: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new LocationError(`the ${what} "${text}" is not a valid URL`);
  }
}

function requireSecure(url: URL, env: NodeJS.ProcessEnv | undefined): void {
  if (url.username || url.password)
    throw new LocationError(`the location ${url.protocol}//${url.host}${url.pathname} carries credentials in its URL, which Gantry refuses`);
  if (url.protocol === 'http:' && !plainHttpAllowed(url, env)) {
    throw new LocationError(
      `the location http://${url.host}${url.pathname} uses plain http`,
      'use https, or opt in for this host with GANTRY_REGISTRY_ALLOW_HTTP',
    );
  }
}

function parseHttp(text: string, subdir: string, env: NodeJS.ProcessEnv | undefined): HttpLocation {
  const url = parseUrl(text, 'download URL');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LocationError(`the download URL "${text}" is not http or https`);
  requireSecure(url, env);
  url.hash = '';
  const archive = takeArchive(url.searchParams, url.pathname);
  const checksum = takeChecksum(url.searchParams);
  return { getter: 'http', url: url.toString(), archive, checksum, subdir };
}

function parseS3(text: string, subdir: string, env: NodeJS.ProcessEnv | undefined): S3Location {
  const url = parseUrl(text, 's3 URL');
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LocationError(`the s3 location "${text}" must be an http or https URL, e.g. s3::https://s3.amazonaws.com/bucket/key`);
  requireSecure(url, env);
  const params = url.searchParams;
  const archive = takeArchive(params, url.pathname);
  const checksum = takeChecksum(params);
  const versionId = params.get('version') ?? undefined;
  let region = params.get('region') ?? undefined;
  const host = url.hostname.toLowerCase();
  let path: string;
  try {
    path = decodeURIComponent(url.pathname).replace(/^\//, '');
  } catch {
    throw new LocationError(`the s3 location "${text}" has a path that is not valid percent-encoded UTF-8`);
  }
  let bucket: string;
  let key: string;
  let endpoint: string | undefined;
  const aws = /^(?:(.+)\.)?s3(?:[.-]([a-z0-9-]+))?(?:\.dualstack)?\.amazonaws\.com(?:\.cn)?$/.exec(host);
  if (aws) {
    const [, virtualBucket, hostRegion] = aws;
    if (!region && hostRegion && hostRegion !== 'external-1') region = hostRegion;
    if (virtualBucket) {
      bucket = virtualBucket;
      key = path;
    } else {
      [bucket, key] = splitBucketKey(path, text);
    }
  } else {
    // An S3-compatible store: path-style addressing against the given endpoint.
    endpoint = `${url.protocol}//${url.host}`;
    [bucket, key] = splitBucketKey(path, text);
  }
  if (!key) throw new LocationError(`the s3 location "${text}" names no object key`);
  return { getter: 's3', bucket, key, region, endpoint, versionId, archive, checksum, subdir };
}

function splitBucketKey(path: string, text: string): [string, string] {
  const slash = path.indexOf('/');
  if (slash <= 0) throw new LocationError(`the s3 location "${text}" names no bucket and key`);
  return [path.slice(0, slash), path.slice(slash + 1)];
}

function parseGit(text: string, subdir: string, trusted: boolean, env: NodeJS.ProcessEnv | undefined): GitLocation {
  let repo = text;
  let query = '';
  const queryAt = text.indexOf('?');
  if (queryAt !== -1) {
    repo = text.slice(0, queryAt);
    query = text.slice(queryAt + 1);
  }
  const params = new URLSearchParams(query);
  const ref = params.get('ref') ?? undefined;
  const depthText = params.get('depth') ?? undefined;
  if (params.has('sshkey')) throw new LocationError('git locations with an inline sshkey are not supported', 'use an ssh agent or ~/.ssh/config');
  for (const name of params.keys()) {
    if (name !== 'ref' && name !== 'depth') throw new LocationError(`the git location "${repo}" has an unknown parameter "${name}"`);
  }
  if (ref !== undefined && (ref === '' || ref.startsWith('-') || /[\0\s]/.test(ref))) {
    throw new LocationError(`the git ref "${ref}" is not a valid ref`, 'a ref names a branch, tag or commit and never starts with "-"');
  }
  let depth: number | undefined;
  if (depthText !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(depthText)) throw new LocationError(`the git depth "${depthText}" is not a positive integer`);
    depth = Number(depthText);
  }
  if (repo.startsWith('-')) throw new LocationError(`the git repository "${repo}" starts with "-"`);
  const scpLike = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)/.test(repo);
  if (!scpLike) {
    const url = parseUrl(repo, 'git repository URL');
    const allowed = trusted ? ['https:', 'http:', 'ssh:', 'git:', 'file:'] : ['https:', 'http:', 'ssh:'];
    if (!allowed.includes(url.protocol)) {
      throw new LocationError(
        url.protocol === 'file:'
          ? `the git location "${repo}" is a local repository, which a remote registry may not name`
          : `the git location "${repo}" uses the unsupported scheme ${url.protocol}`,
      );
    }
    if (url.protocol === 'http:' || url.protocol === 'https:') requireSecure(url, env);
    else if (url.password)
      throw new LocationError(`the git location ${url.protocol}//${url.host}${url.pathname} carries a password in its URL, which Gantry refuses`);
  }
  return { getter: 'git', url: repo, ref, depth, subdir };
}

/** Interprets a location string; throws a LocationError naming the value when it is not understood. */
export function parseLocation(value: string, options: ParseLocationOptions = {}): SourceLocation {
  if (typeof value !== 'string') expectString('parseLocation', 'value', value, 'a download location such as "https://example.com/m.tar.gz"');
  expectOptions('parseLocation', options);
  const trusted = options.trusted ?? false;
  let text = value.trim();
  if (text === '') throw new LocationError('the download location is empty');
  if (/[\0\r\n]/.test(text)) throw new LocationError('the download location contains control characters');

  let forced: string | undefined;
  const forcedMatch = /^([A-Za-z0-9]+)::(.*)$/s.exec(text);
  if (forcedMatch) {
    forced = (forcedMatch[1] as string).toLowerCase();
    text = forcedMatch[2] as string;
  }
  const isRelative = text.startsWith('/') || text.startsWith('./') || text.startsWith('../');
  const { url: withoutSubdir, subdir: rawSubdir } = splitSubdir(text);
  const subdir = cleanLocationSubdir(rawSubdir);
  let target = withoutSubdir;

  if (isRelative) {
    if (options.base !== undefined) {
      target = new URL(withoutSubdir, options.base).toString();
    } else if (!trusted) {
      throw new LocationError(`the download location "${value}" is relative, but there is no download URL to resolve it against`);
    } else {
      throw new LocationError(`the location "${value}" is a local path; give a git:: or file:// URL, or an archive URL`);
    }
  }

  if (forced === undefined) {
    if (/^git@[^:]+:/.test(target)) forced = 'git';
    else if (/^(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)\//i.test(target)) {
      forced = 'git';
      target = `https://${target.replace(/^www\./i, '')}`;
    } else if (/^https?:\/\//i.test(target)) forced = 'http';
    else if (/^file:/i.test(target)) {
      if (!trusted) throw new LocationError(`the download location "${value}" is a local file, which a remote registry may not name`);
      forced = 'file';
    } else if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      throw new LocationError(`the download location "${value}" uses a scheme Gantry has no getter for`, 'supported: https:// archives, git::, s3::');
    } else {
      throw new LocationError(`the download location "${value}" is neither a URL nor a known source form`, 'supported: https:// archives, git::, s3::');
    }
  }

  switch (forced) {
    case 'http':
    case 'https':
      return parseHttp(target, subdir, options.env);
    case 's3':
      return parseS3(target, subdir, options.env);
    case 'git':
      return parseGit(target, subdir, trusted, options.env);
    case 'file': {
      const url = parseUrl(target, 'file URL');
      const archive = takeArchive(url.searchParams, url.pathname);
      const checksum = takeChecksum(url.searchParams);
      return { getter: 'http', url: url.toString(), archive, checksum, subdir };
    }
    default:
      throw new LocationError(`the download location "${value}" names the unknown getter "${forced}::"`, 'supported getters: git::, s3::, http::, https::');
  }
}

const secretParams =
  /^(x-amz-(signature|credential|security-token)|signature|sig|token|access_token|aws_access_key_id|aws_access_key_secret|aws_access_token|googleaccessid|x-goog-signature|x-goog-credential)$/i;

/** A query string that keeps `:` and `/` readable (checksums, refs), as people write them. */
function readableQuery(params: URLSearchParams): string {
  const text = params.toString().replace(/%3A/gi, ':').replace(/%2F/gi, '/');
  return text ? `?${text}` : '';
}

/** The location as text with `//subdir`, for the lock file and logs: userinfo and signing parameters removed. */
export function formatLocation(location: SourceLocation): string {
  expectObject('formatLocation', 'location', location, 'a location from parseLocation');
  if (!['http', 's3', 'git'].includes(location.getter as string)) expectObject('formatLocation', 'location', null, 'a location from parseLocation');
  const sub = location.subdir ? `//${location.subdir}` : '';
  switch (location.getter) {
    case 'http': {
      const url = new URL(location.url);
      url.username = '';
      url.password = '';
      for (const name of [...url.searchParams.keys()]) if (secretParams.test(name)) url.searchParams.delete(name);
      if (location.archive !== undefined && location.archive !== archiveTypeFromPath(url.pathname))
        url.searchParams.set('archive', location.archive === 'none' ? 'false' : location.archive);
      if (location.checksum) url.searchParams.set('checksum', `${location.checksum.algorithm}:${location.checksum.hex}`);
      const query = readableQuery(url.searchParams);
      url.search = '';
      return `${url.toString()}${sub}${query}`;
    }
    case 's3': {
      const base = location.endpoint ?? (location.region ? `https://s3.${location.region}.amazonaws.com` : 'https://s3.amazonaws.com');
      const params = new URLSearchParams();
      if (location.region && location.endpoint) params.set('region', location.region);
      if (location.versionId) params.set('version', location.versionId);
      if (location.archive !== undefined && location.archive !== archiveTypeFromPath(location.key))
        params.set('archive', location.archive === 'none' ? 'false' : location.archive);
      if (location.checksum) params.set('checksum', `${location.checksum.algorithm}:${location.checksum.hex}`);
      const query = readableQuery(params);
      return `s3::${base}/${location.bucket}/${location.key}${sub}${query}`;
    }
    case 'git': {
      const params = new URLSearchParams();
      if (location.ref !== undefined) params.set('ref', location.ref);
      if (location.depth !== undefined) params.set('depth', String(location.depth));
      const query = readableQuery(params);
      return `git::${location.url}${sub}${query}`;
    }
  }
}
