/**
 * Webhook signatures (HOOK-AUTH-HMAC, HOOK-HDR-SIGNATURE-SHA256, HOOK-HDR-SIGNATURE-SHA1): an HMAC of the raw body
 * bytes — never of re-serialised JSON — keyed with the webhook's secret, sent as `X-Hub-Signature-256: sha256=<hex>`
 * (preferred) and `X-Hub-Signature: sha1=<hex>` (kept for compatibility). `verify` prefers the sha256 header and
 * reads the sha1 one only when no sha256 header came and SHA-1 is allowed; it compares digests in constant time,
 * tries every secret given (rotation) and says which matched. A header that is not `<algorithm>=` and the digest's
 * hex digits is refused as malformed, never thrown on. No message quotes a secret or a signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { UsageError } from '../errors.js';
import { expectObject, expectOptions, expectString, refuseArgument } from '../arguments.js';

export type SignatureAlgorithm = 'sha256' | 'sha1';

/** The header each algorithm's signature comes in, lower-case. */
export const signatureHeaders: Readonly<Record<SignatureAlgorithm, string>> = {
  sha256: 'x-hub-signature-256',
  sha1: 'x-hub-signature',
};

/** The header names as the platform writes them, for messages. */
const headerTitle: Readonly<Record<SignatureAlgorithm, string>> = {
  sha256: 'X-Hub-Signature-256',
  sha1: 'X-Hub-Signature',
};

/** Hex digits in each algorithm's digest. */
const hexLength: Readonly<Record<SignatureAlgorithm, number>> = { sha256: 64, sha1: 40 };

export type VerifyFailureReason = 'missing' | 'malformed' | 'mismatch' | 'sha1-refused';

export type VerifyResult = { ok: true; algorithm: SignatureAlgorithm; secretIndex: number } | { ok: false; reason: VerifyFailureReason; message: string };

export interface VerifyOptions {
  /** Accept `X-Hub-Signature` (sha1) when no `X-Hub-Signature-256` came. Default true, for older platforms. */
  allowSha1?: boolean;
}

/** Headers as node:http gives them, any case of name; a Fetch `Headers` object is read through its `get`. */
export type SignatureHeaderSource = Record<string, string | string[] | undefined>;

/** A signature header that has the right form: the algorithm it names and its digest bytes. */
export interface SignatureClaim {
  algorithm: SignatureAlgorithm;
  digest: Buffer;
}

/** The body's bytes: a Buffer or Uint8Array as it is, a string as UTF-8. */
function bodyBytes(where: string, body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  refuseArgument(where, 'body', 'a Buffer, a Uint8Array or a string (the raw bytes received)', body);
}

function checkAlgorithm(where: string, algorithm: unknown): asserts algorithm is SignatureAlgorithm {
  if (algorithm !== 'sha256' && algorithm !== 'sha1') {
    refuseArgument(where, 'algorithm', "'sha256' or 'sha1'", algorithm);
  }
}

function secretList(where: string, secrets: unknown): readonly string[] {
  if (typeof secrets === 'string') {
    expectString(where, 'secret', secrets, 'a non-empty string or an array of them (the webhook secrets)');
    return [secrets];
  }
  if (!Array.isArray(secrets) || secrets.length === 0) {
    refuseArgument(where, 'secrets', 'a non-empty string or a non-empty array of them', secrets);
  }
  secrets.forEach((secret, index) => expectString(where, `secrets[${index}]`, secret, 'a non-empty string'));
  return secrets as readonly string[];
}

function hmac(algorithm: SignatureAlgorithm, secret: string, body: Buffer): Buffer {
  return createHmac(algorithm, secret).update(body).digest();
}

/**
 * `sha256=<hex>` (or `sha1=<hex>`): the value the platform sends in `X-Hub-Signature-256` (`X-Hub-Signature`) for
 * `body` with `secret`. A string body is signed as its UTF-8 bytes.
 */
export function sign(secret: string, body: Uint8Array | string, algorithm: SignatureAlgorithm = 'sha256'): string {
  expectString('sign', 'secret', secret, 'a non-empty string (the webhook secret)');
  const bytes = bodyBytes('sign', body);
  checkAlgorithm('sign', algorithm);
  return `${algorithm}=${hmac(algorithm, secret, bytes).toString('hex')}`;
}

/** Every value of a header, any case of its name; an array's entries each count. Non-strings are kept to refuse. */
function headerValues(headers: object, name: string): unknown[] {
  const get = (headers as { get?: unknown }).get;
  if (typeof get === 'function' && !Object.prototype.hasOwnProperty.call(headers, 'get')) {
    const value: unknown = get.call(headers, name);
    return value === null || value === undefined ? [] : [value];
  }
  const values: unknown[] = [];
  // for…in over own keys, not Object.entries: no array of pairs made per header per delivery.
  for (const key in headers) {
    if (!Object.prototype.hasOwnProperty.call(headers, key) || key.toLowerCase() !== name) continue;
    const value: unknown = (headers as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (Array.isArray(value)) values.push(...(value as unknown[]));
    else values.push(value);
  }
  return values;
}

export type SignatureClaimResult = { ok: true; claim: SignatureClaim } | { ok: false; reason: VerifyFailureReason; message: string };

/** One header's value checked for form: `<algorithm>=` and exactly the digest's hex digits (either case). */
function parseClaim(algorithm: SignatureAlgorithm, values: unknown[]): SignatureClaimResult {
  const title = headerTitle[algorithm];
  const form = `${algorithm}= followed by ${hexLength[algorithm]} hex digits`;
  const malformed = (why: string): SignatureClaimResult => ({ ok: false, reason: 'malformed', message: `${title} is malformed: ${why}; it must be ${form}` });
  if (values.length > 1) return malformed(`it came ${values.length} times`);
  const raw = values[0];
  if (typeof raw !== 'string') return malformed('it is not text');
  const value = /^[ \t]|[ \t]$/.test(raw) ? raw.replace(/^[ \t]+|[ \t]+$/g, '') : raw;
  if (value.includes(',')) return malformed('it holds several values');
  const prefix = `${algorithm}=`;
  if (!value.startsWith(prefix)) {
    const named = /^([A-Za-z0-9-]{1,16})=/.exec(value)?.[1];
    return malformed(
      named === undefined
        ? `it does not start with ${prefix}`
        : `it names ${named.toLowerCase() === algorithm ? `${algorithm} in another case` : 'another algorithm'}, not ${algorithm}`,
    );
  }
  const hex = value.slice(prefix.length);
  if (!/^[0-9a-fA-F]*$/.test(hex)) return malformed('the digest holds a character that is not a hex digit');
  if (hex.length !== hexLength[algorithm]) return malformed(`the digest has ${hex.length} hex digits`);
  return { ok: true, claim: { algorithm, digest: Buffer.from(hex, 'hex') } };
}

/**
 * The signature a delivery claims, checked for presence and form only (no body needed): `X-Hub-Signature-256` when
 * it came (a malformed one is refused even when a good `X-Hub-Signature` came too — the preferred header wins), else
 * `X-Hub-Signature` when `allowSha1`, else a refusal. Lets a receiver refuse an unsigned delivery before reading
 * its body.
 */
export function readSignatureClaim(headers: SignatureHeaderSource, options: VerifyOptions = {}): SignatureClaimResult {
  expectObject('readSignatureClaim', 'headers', headers, 'an object of request headers');
  expectOptions('readSignatureClaim', options);
  if (options.allowSha1 !== undefined && typeof options.allowSha1 !== 'boolean') {
    refuseArgument('readSignatureClaim', 'options.allowSha1', 'true or false', options.allowSha1);
  }
  return claimOf(headerValues(headers, signatureHeaders.sha256), () => headerValues(headers, signatureHeaders.sha1), options.allowSha1 ?? true);
}

/**
 * readSignatureClaim for the headers of a node:http request, whose names are lower-case already (a repeated header
 * comes joined with commas, which the claim refuses): read by name, not by a walk over every header.
 */
export function requestSignatureClaim(headers: IncomingHttpHeaders, allowSha1: boolean): SignatureClaimResult {
  const values = (name: string): unknown[] => {
    const value = headers[name];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  };
  return claimOf(values(signatureHeaders.sha256), () => values(signatureHeaders.sha1), allowSha1);
}

function claimOf(sha256: unknown[], sha1Values: () => unknown[], allowSha1: boolean): SignatureClaimResult {
  if (sha256.length > 0) return parseClaim('sha256', sha256);
  const sha1 = sha1Values();
  if (sha1.length > 0) {
    if (!allowSha1) {
      return {
        ok: false,
        reason: 'sha1-refused',
        message:
          'only X-Hub-Signature (SHA-1) came, and SHA-1 signatures are refused here (allowSha1: false); the platform sends X-Hub-Signature-256 with every delivery of a webhook that has a secret',
      };
    }
    return parseClaim('sha1', sha1);
  }
  return {
    ok: false,
    reason: 'missing',
    message: allowSha1
      ? 'the delivery is not signed: neither X-Hub-Signature-256 nor X-Hub-Signature came; set the same secret on the webhook and here'
      : 'the delivery is not signed: no X-Hub-Signature-256 came; set the same secret on the webhook and here',
  };
}

/** A signature check fed the body as it streams in: `update` with each chunk in order, then `result` once. */
export interface SignatureCheck {
  update(chunk: Uint8Array): void;
  result(): VerifyResult;
}

/**
 * Whether a well-formed claim matches a body given piece by piece (so that a large body is hashed while it arrives,
 * not in one block after), under one of `secrets`: every secret's HMAC is computed (no early exit), each digest
 * compared with `timingSafeEqual` on equal-length buffers. `secrets` and `claim` are taken as checked.
 */
export function signatureCheck(secrets: readonly string[], claim: SignatureClaim): SignatureCheck {
  const hmacs = secrets.map((secret) => createHmac(claim.algorithm, secret));
  let done = false;
  return {
    update(chunk) {
      if (done) throw new UsageError('signatureCheck: update after result', { code: 'INVALID_ARGUMENT' });
      for (const hmac of hmacs) hmac.update(chunk);
    },
    result() {
      if (done) throw new UsageError('signatureCheck: result called twice', { code: 'INVALID_ARGUMENT' });
      done = true;
      let match = -1;
      hmacs.forEach((hmac, index) => {
        const expected = hmac.digest();
        if (expected.length === claim.digest.length && timingSafeEqual(expected, claim.digest) && match < 0) match = index;
      });
      if (match >= 0) return { ok: true, algorithm: claim.algorithm, secretIndex: match };
      const which = secrets.length === 1 ? 'the secret' : `any of the ${secrets.length} secrets`;
      return {
        ok: false,
        reason: 'mismatch',
        message: `${headerTitle[claim.algorithm]} does not match the body with ${which}: the body was changed on the way, or the webhook's secret is not one of those given`,
      };
    },
  };
}

/**
 * Whether a well-formed claim matches `body` under one of `secrets`. Every secret is tried (no early exit), each
 * digest compared with `timingSafeEqual` on equal-length buffers.
 */
export function matchSignatureClaim(secrets: readonly string[], body: Uint8Array | string, claim: SignatureClaim): VerifyResult {
  const list = secretList('matchSignatureClaim', secrets);
  const bytes = bodyBytes('matchSignatureClaim', body);
  expectObject('matchSignatureClaim', 'claim', claim, 'a claim from readSignatureClaim');
  checkAlgorithm('matchSignatureClaim', claim.algorithm);
  if (!Buffer.isBuffer(claim.digest)) refuseArgument('matchSignatureClaim', 'claim.digest', 'a Buffer', claim.digest);
  const check = signatureCheck(list, claim);
  check.update(bytes);
  return check.result();
}

/**
 * Checks a delivery's signature. `secrets` is one secret or several (rotation: any may match; `secretIndex` says
 * which). `body` is the raw bytes as received. `headers` are the request's (names in any case). A failure is a
 * result, never an exception: `missing`, `malformed` (wrong prefix, length or digits), `mismatch`, or
 * `sha1-refused` (only `X-Hub-Signature` came and `allowSha1` is false). Wrong argument types are a UsageError.
 */
export function verify(
  secrets: string | readonly string[],
  body: Uint8Array | string,
  headers: SignatureHeaderSource,
  options: VerifyOptions = {},
): VerifyResult {
  const list = secretList('verify', secrets);
  const bytes = bodyBytes('verify', body);
  expectObject('verify', 'headers', headers, 'an object of request headers');
  expectOptions('verify', options);
  if (options.allowSha1 !== undefined && typeof options.allowSha1 !== 'boolean') {
    refuseArgument('verify', 'options.allowSha1', 'true or false', options.allowSha1);
  }
  const claim = readSignatureClaim(headers, options);
  if (!claim.ok) return claim;
  return matchSignatureClaim(list, bytes, claim.claim);
}
