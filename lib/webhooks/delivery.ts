/**
 * Reading one webhook delivery from a node:http request (HOOK-DEL-REQUEST and the delivery headers, HOOK-HDR-*):
 * the method, the platform's headers, the media type and declared length are checked before a byte of the body is
 * read; the body is read with the 25 MB cap counted while it streams (HOOK-LIM-PAYLOAD-25MB), never buffered past
 * it; the signature is checked on the raw bytes (HOOK-AUTH-HMAC); then the JSON or form body is parsed. Every
 * refusal is a WebhookDeliveryError with its own status and reason, and nothing refused reaches a handler.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { UsageError } from '../errors.js';
import { expectArray, expectObject, expectOptions, expectString, refuseArgument } from '../arguments.js';
import { findJsonSyntaxProblem } from '../json-syntax.js';
import { WebhookDeliveryError, type WebhookDeliveryErrorDetails } from './errors.js';
import { scanJsonObject } from './json-scan.js';
import { requestSignatureClaim, signatureCheck, type SignatureAlgorithm, type SignatureCheck } from './verify.js';

/** HOOK-LIM-PAYLOAD-25MB: the platform never delivers a payload over 25 MB; read as 25 MiB, the larger reading. */
export const defaultMaxDeliveryBytes = 25 * 1024 * 1024;

/** HOOK-HDR-USER-AGENT. */
export const hookshotUserAgentPrefix = 'Platform-Hookshot/';

/** The delivery headers (lower-case, as node:http gives them). */
export const deliveryHeaders = {
  hookId: 'x-platform-hook-id',
  event: 'x-platform-event',
  delivery: 'x-platform-delivery',
  targetType: 'x-platform-hook-installation-target-type',
  targetId: 'x-platform-hook-installation-target-id',
  userAgent: 'user-agent',
  contentType: 'content-type',
  contentLength: 'content-length',
} as const;

/** The names of the required headers as a refusal writes them. */
const titles: Record<string, string> = {
  'x-platform-hook-id': 'X-Platform-Hook-ID',
  'x-platform-event': 'X-Platform-Event',
  'x-platform-delivery': 'X-Platform-Delivery',
  'user-agent': 'User-Agent',
};

/** Headers every delivery must carry; the installation target type and id are read when present. */
const requiredHeaders = [deliveryHeaders.event, deliveryHeaders.delivery, deliveryHeaders.hookId, deliveryHeaders.userAgent] as const;

/** An event name: lower-case words joined by `_` (`deployment_protection_rule`), as the catalogue names them. */
const eventPattern = /^[a-z][a-z0-9_]{0,99}$/;
/** A GUID or hook id: visible ASCII without separators, so it is safe as a key and in a log line. */
const identifierPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface ReadDeliveryOptions {
  /** The webhook's secret, or several while rotating (any may match). May be empty only with requireSignature false. */
  secrets: readonly string[];
  /** Accept `X-Hub-Signature` (sha1) when no `X-Hub-Signature-256` came. Default true. */
  allowSha1?: boolean;
  /** The body cap in bytes, checked against Content-Length and while the body streams. Default 25 MiB. */
  maxBytes?: number;
  /** Refuse unsigned deliveries. Default true when secrets are given, false when none are. */
  requireSignature?: boolean;
}

export interface Delivery {
  /** X-Platform-Delivery: the delivery's GUID (a redelivery has the same). */
  id: string;
  /** X-Platform-Event. */
  event: string;
  /** X-Platform-Hook-ID. */
  hookId: string;
  /** X-Platform-Hook-Installation-Target-Type, when it came. */
  targetType: string | undefined;
  /** X-Platform-Hook-Installation-Target-ID, when it came. */
  targetId: string | undefined;
  userAgent: string;
  contentType: 'json' | 'form';
  /** The bytes of the body as received. */
  contentLength: number;
  rawBody: Buffer;
  /** The JSON object (for a form, the `payload` field's). */
  payload: Record<string, unknown>;
  /** Which signature was checked; `none` when none was required and none could be checked. */
  signature: SignatureAlgorithm | 'none';
}

const where = 'readDelivery';

interface Settings {
  secrets: readonly string[];
  allowSha1: boolean;
  maxBytes: number;
  requireSignature: boolean;
}

function checkRequest(request: unknown): asserts request is IncomingMessage {
  const takesRequest = 'an http.IncomingMessage (the request a node:http server hands its handler)';
  expectObject(where, 'request', request, takesRequest);
  const candidate = request as Partial<IncomingMessage>;
  if (typeof candidate.on !== 'function' || typeof candidate.method !== 'string' || candidate.headers === null || typeof candidate.headers !== 'object') {
    refuseArgument(where, 'request', takesRequest, request);
  }
  checkUnread(candidate);
}

/** The body is still there to read as bytes: no encoding set, nothing read yet. */
function checkUnread(request: Partial<IncomingMessage>): void {
  if (request.readableEncoding) {
    throw new UsageError(
      `${where}: the request has an encoding set (setEncoding), so its raw bytes are lost and no signature can be checked; do not call setEncoding on a webhook request`,
      { code: 'INVALID_ARGUMENT' },
    );
  }
  if (request.readableEnded || (request as { readableDidRead?: boolean }).readableDidRead) {
    throw new UsageError(
      `${where}: the request's body was already read (a body parser ran first?); the signature needs the raw bytes, so read the delivery before any body parser`,
      { code: 'INVALID_ARGUMENT' },
    );
  }
}

function checkOptions(options: unknown): Settings {
  expectObject(where, 'options', options, 'an object ({ secrets, allowSha1?, maxBytes?, requireSignature? })');
  const { secrets, allowSha1, maxBytes, requireSignature } = options as Partial<ReadDeliveryOptions>;
  expectArray(where, 'options.secrets', secrets, 'an array of the webhook secrets (empty only with requireSignature: false)');
  secrets.forEach((secret, index) => expectString(where, `options.secrets[${index}]`, secret, 'a non-empty string'));
  if (allowSha1 !== undefined && typeof allowSha1 !== 'boolean') refuseArgument(where, 'options.allowSha1', 'true or false', allowSha1);
  if (requireSignature !== undefined && typeof requireSignature !== 'boolean')
    refuseArgument(where, 'options.requireSignature', 'true or false', requireSignature);
  if (maxBytes !== undefined && !(Number.isSafeInteger(maxBytes) && maxBytes > 0)) {
    refuseArgument(where, 'options.maxBytes', 'a positive whole number of bytes', maxBytes);
  }
  const required = requireSignature ?? secrets.length > 0;
  if (required && secrets.length === 0) {
    throw new UsageError(`${where}: options.requireSignature is true but options.secrets is empty: give the webhook's secret`, { code: 'INVALID_ARGUMENT' });
  }
  return { secrets: [...secrets], allowSha1: allowSha1 ?? true, maxBytes: maxBytes ?? defaultMaxDeliveryBytes, requireSignature: required };
}

function oneHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === '' ? undefined : text;
}

function bytesText(bytes: number): string {
  // A cap is a positive number of bytes, so a whole number of MiB is at least one.
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  return `${bytes} bytes`;
}

/** A refusal before the body was read: the body is left unread, so the connection closes after the answer. */
function refuseUnread(details: WebhookDeliveryErrorDetails): WebhookDeliveryError {
  return new WebhookDeliveryError({ ...details, headers: { connection: 'close', ...(details.headers ?? {}) } });
}

/** Content-Type → which body, or a 415. Parameters are allowed; a charset other than UTF-8 (or ASCII) is not. */
function mediaType(value: string | undefined, deliveryId: string | undefined): 'json' | 'form' {
  const accept = 'application/json, application/x-www-form-urlencoded';
  const unsupported = (why: string) =>
    refuseUnread({
      reason: 'unsupported-media-type',
      message: `${why}: a delivery is application/json or application/x-www-form-urlencoded (HOOK-HDR-CONTENT-TYPE)`,
      hint: "set the webhook's content type to json or form",
      headers: { 'accept-post': accept },
      deliveryId,
    });
  if (value === undefined) throw unsupported('no Content-Type came');
  const [type, ...parameters] = value.split(';').map((part) => part.trim());
  const essence = type!.toLowerCase();
  const kind = essence === 'application/json' ? 'json' : essence === 'application/x-www-form-urlencoded' ? 'form' : undefined;
  if (kind === undefined) throw unsupported('the Content-Type is not a media type a delivery has');
  for (const parameter of parameters) {
    const [name, raw] = parameter.split('=', 2).map((part) => part.trim());
    if (name!.toLowerCase() !== 'charset') continue;
    if (raw === undefined || !['utf-8', 'utf8', 'us-ascii'].includes(raw.replace(/^"(.*)"$/, '$1').toLowerCase())) {
      throw unsupported('the Content-Type names a charset other than UTF-8');
    }
  }
  return kind;
}

/** Where the body's bytes go as they arrive. */
interface BodySink {
  add(chunk: Buffer): void;
}

/** Bodies at least this large are read into a reusable buffer when their bytes are not handed out (`reusable`). */
const REUSE_BYTES = 1024 * 1024;
/** How long the spare buffer is kept after a large body: a burst of large deliveries reuses it, an idle receiver frees it. */
const SPARE_MS = 30_000;

/**
 * One buffer for large bodies, reused from one to the next while they come: a new 25 MB buffer per delivery would be
 * freed only when the garbage collector next runs — which, with little else allocated, is several deliveries later
 * (20 × 25 MB arriving together then held ~120 MB of spent buffers). Only a reader whose bytes are copied out before
 * it gives the buffer back (the receiver's: the text, or the catalogue check's values, are copies) takes it.
 */
let spare: Buffer | undefined;
let spareTimer: NodeJS.Timeout | undefined;

function takeSpare(size: number): Buffer | undefined {
  if (spare === undefined || spare.length < size) return undefined;
  const taken = spare;
  spare = undefined;
  return taken;
}

function giveSpare(buffer: Buffer): void {
  if (spare !== undefined && spare.length >= buffer.length) return;
  spare = buffer;
  clearTimeout(spareTimer);
  spareTimer = setTimeout(() => {
    spare = undefined;
    spareTimer = undefined;
  }, SPARE_MS);
  spareTimer.unref();
}

/** The spare buffer's size in bytes, 0 when none is held: for tests of the reuse, which nothing else can see. */
export function spareBufferBytes(): number {
  return spare?.length ?? 0;
}

/** Lets the spare buffer go now rather than SPARE_MS after its last use: tests start from none. */
export function dropSpareBuffer(): void {
  clearTimeout(spareTimer);
  spare = undefined;
  spareTimer = undefined;
}

/**
 * The body's bytes kept as they come. With a declared length they are copied into one buffer of that length
 * (allocated when the first byte arrives; the length is already checked against the cap), so a large body is never
 * its chunks and their concatenation at once; a body that comes in one chunk is that chunk. `reusable`: a large
 * body's buffer is the spare one, given back by `release` once nothing reads it.
 */
class BytesSink implements BodySink {
  private chunks: Buffer[] = [];
  private whole: Buffer | undefined;
  private backing: Buffer | undefined;
  private total = 0;

  /** `check`, when given, is fed every chunk too: the signature is computed as the body arrives. */
  constructor(
    private readonly declared: number | undefined,
    private readonly reusable: boolean,
    private readonly check: SignatureCheck | undefined,
  ) {}

  add(chunk: Buffer): void {
    this.check?.update(chunk);
    const at = this.total;
    this.total += chunk.length;
    if (this.declared !== undefined && this.total <= this.declared && !(at === 0 && this.total === this.declared)) {
      if (this.whole === undefined) {
        const reuse = this.reusable && this.declared >= REUSE_BYTES;
        this.backing = (reuse ? takeSpare(this.declared) : undefined) ?? Buffer.allocUnsafe(this.declared);
        this.whole = this.backing.subarray(0, this.declared);
      }
      chunk.copy(this.whole, at);
    } else {
      this.chunks.push(chunk);
    }
  }

  bytes(): Buffer {
    return this.whole ?? (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.total));
  }

  /** Nothing reads the bytes any more: a reusable buffer goes back to be the spare. */
  release(): void {
    if (this.reusable && this.backing !== undefined && this.backing.length >= REUSE_BYTES) giveSpare(this.backing);
    this.backing = undefined;
    this.whole = undefined;
    this.chunks = [];
  }
}

/**
 * The body as text, or undefined when it is not UTF-8; a leading byte order mark is dropped (as TextDecoder does).
 * ASCII, what nearly every payload is, is copied as Latin-1: the same characters, at memory speed.
 */
function decodeUtf8(bytes: Buffer): string | undefined {
  const text = bytes.subarray(bomLength(bytes));
  if (isAscii(text)) return text.toString('latin1');
  return isUtf8(text) ? text.toString('utf8') : undefined;
}

function bomLength(bytes: Buffer): number {
  // A byte past the end reads undefined: no length check needed.
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
}

/**
 * From this size a body that is only checked (checkOnly) is scanned instead of parsed; below it JSON.parse, which
 * builds a small graph quickly, is cheaper than the scan and the parse of the root object's members together.
 */
const CHECK_ONLY_BYTES = 256 * 1024;

/** How large a member of the root object is parsed for the catalogue check; larger objects and arrays stand in. */
const STAND_IN_BYTES = 16 * 1024;

/**
 * For the catalogue check without parsing the payload: the root object's members, each parsed exactly (JSON.parse of
 * its bytes) except objects and arrays larger than STAND_IN_BYTES, which stand in by what checkPayload reads of
 * them — an object for an object, an array of as many elements of the same kinds for an array — or undefined when
 * the bytes are not a JSON object (the caller parses them for the exact refusal). `sender` is always parsed (its
 * `login` says whether it is the ghost).
 */
function payloadForCheck(bytes: Buffer): Record<string, unknown> | undefined {
  if (!isUtf8(bytes)) return undefined;
  const from = bomLength(bytes);
  const members = scanJsonObject(bytes, from);
  if (members === undefined) return undefined;
  const payload: Record<string, unknown> = {};
  const anObject = Object.freeze({});
  for (const member of members) {
    const key = JSON.parse(bytes.toString('utf8', member.keyStart, member.keyEnd)) as string;
    let value: unknown;
    if (member.end - member.start <= STAND_IN_BYTES || key === 'sender' || (member.kind !== 'object' && member.kind !== 'array')) {
      value = JSON.parse(bytes.toString('utf8', member.start, member.end));
    } else if (member.kind === 'object') {
      value = anObject;
    } else {
      const { count, objects, strings, nulls } = member.elements!;
      value = [
        ...Array<unknown>(objects).fill(anObject),
        ...Array<unknown>(strings).fill(''),
        ...Array<unknown>(nulls).fill(null),
        ...Array<unknown>(count - objects - strings - nulls).fill(0),
      ];
    }
    // As JSON.parse makes them: own properties, the last of a repeated key winning, "__proto__" included.
    Object.defineProperty(payload, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return payload;
}

/** Reads the body into `sink`, counting bytes as they come; past `maxBytes` it stops reading and refuses with 413. */
function readBody(request: IncomingMessage, maxBytes: number, declared: number | undefined, deliveryId: string, sink: BodySink): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let total = 0;
    let settled = false;
    // The listeners stay on the request once it is settled (what still comes — the close after the end, an error
    // from a sender going away — changes nothing), except `data` when reading stops early.
    const finish = (outcome: number | WebhookDeliveryError) => {
      if (settled) return;
      settled = true;
      if (outcome instanceof WebhookDeliveryError) {
        request.off('data', onData);
        reject(outcome);
      } else {
        resolve(outcome);
      }
    };
    const onData = (chunk: Buffer | string) => {
      if (settled) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += bytes.length;
      if (total > maxBytes) {
        // Stop reading: the stream stays paused, so the socket applies back-pressure to the sender instead of
        // Gantry reading (or keeping) what it sends; the answer (sendRefusal) closes the connection.
        request.pause();
        finish(
          new WebhookDeliveryError({
            reason: 'payload-too-large',
            message: `the delivery's body passed the ${bytesText(maxBytes)} cap while it streamed in (HOOK-LIM-PAYLOAD-25MB); reading stopped after ${total} bytes`,
            hint: 'the platform never delivers a payload over 25 MB; this did not come from it, or the cap (maxBytes) is set below its payloads',
            headers: { connection: 'close' },
            deliveryId,
          }),
        );
        return;
      }
      sink.add(bytes);
    };
    const onEnd = () => {
      if (declared !== undefined && declared !== total) {
        finish(
          new WebhookDeliveryError({
            reason: 'content-length-mismatch',
            message: `the body has ${total} bytes but Content-Length said ${declared} (HOOK-HDR-CONTENT-LENGTH)`,
            deliveryId,
          }),
        );
        return;
      }
      finish(total);
    };
    const aborted = (cause?: unknown) =>
      finish(
        new WebhookDeliveryError({
          reason: 'aborted',
          message: `the sender closed the connection after ${total}${declared === undefined ? '' : ` of ${declared}`} bytes of the body`,
          hint: 'the platform redelivers failed deliveries; nothing was handled',
          deliveryId,
          cause,
        }),
      );
    const onError = (error: Error) => {
      if (!settled) aborted(error);
    };
    const onClose = () => {
      if (!settled) aborted();
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/** The body's text as the receiver reads it: JSON that is UTF-8, or a form's payload field; else the refusal (400). */
function bodyText(kind: 'json' | 'form', bytes: Buffer, deliveryId: string | undefined): string {
  if (kind === 'form') return formPayload(bytes.toString('latin1'), deliveryId);
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new WebhookDeliveryError({ reason: 'malformed-json', message: 'the JSON body is not valid UTF-8', deliveryId });
  return text;
}

/**
 * A whole body's payload, read as the receiver reads a delivery's: the media type from `Content-Type` (415 for one a
 * delivery does not have), JSON that is UTF-8 or a form whose payload field is, a JSON object. The one check `gantry
 * hooks verify` shares with `gantry hooks serve`, so that a saved delivery verifies only if the receiver would take it.
 * Throws the WebhookDeliveryError the receiver answers with.
 */
export function deliveryBodyPayload(contentType: string | undefined, bytes: Buffer, deliveryId?: string): Record<string, unknown> {
  const kind = mediaType(contentType, deliveryId);
  return parseObject(bodyText(kind, bytes, deliveryId), kind === 'json' ? 'the JSON body' : "the form's payload field", deliveryId);
}

/** JSON text → its object, or the refusal naming where it breaks (never quoting it). */
function parseObject(text: string, what: string, deliveryId: string | undefined): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const problem = findJsonSyntaxProblem(text);
    const at = problem ? `: at line ${problem.line}, column ${problem.column} it expected ${problem.expected} and found ${problem.found}` : '';
    throw new WebhookDeliveryError({ reason: 'malformed-json', message: `${what} is not valid JSON${at}`, deliveryId });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new WebhookDeliveryError({
      reason: 'payload-not-object',
      message: `${what} is JSON but ${kind}, not an object: a payload is an object (HOOK-DEL-EXAMPLE-BODY)`,
      deliveryId,
    });
  }
  return value as Record<string, unknown>;
}

function decodeFormComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** `payload=<json>` out of a URL-encoded form (its bytes as Latin-1 text); other fields are ignored, undecoded. */
function formPayload(text: string, deliveryId: string | undefined): string {
  // A URL-encoded body is ASCII; anything else is no form.
  if (/[^\x20-\x7e\t\n\r]/.test(text)) {
    throw new WebhookDeliveryError({
      reason: 'malformed-form',
      message: 'the form body holds bytes a URL-encoded form cannot have (non-ASCII or control characters)',
      deliveryId,
    });
  }
  const payloads: string[] = [];
  for (const field of text.split('&')) {
    const equals = field.indexOf('=');
    const name = decodeFormComponent(equals < 0 ? field : field.slice(0, equals));
    if (name !== 'payload') continue;
    const value = decodeFormComponent(equals < 0 ? '' : field.slice(equals + 1));
    if (value === undefined) {
      throw new WebhookDeliveryError({ reason: 'malformed-form', message: "the form's payload field is not valid percent-encoded UTF-8", deliveryId });
    }
    payloads.push(value);
  }
  if (payloads.length === 0) {
    throw new WebhookDeliveryError({
      reason: 'missing-form-payload',
      message: 'the form body has no payload field: a form delivery is payload=<the JSON payload>',
      deliveryId,
    });
  }
  if (payloads.length > 1) {
    throw new WebhookDeliveryError({
      reason: 'duplicate-form-payload',
      message: `the form body has ${payloads.length} payload fields; a delivery has one`,
      deliveryId,
    });
  }
  return payloads[0]!;
}

/**
 * Reads and checks one delivery. In order: the method (405 unless POST); the headers every delivery carries —
 * X-Platform-Event, X-Platform-Delivery, X-Platform-Hook-ID and a User-Agent starting `Platform-Hookshot/` (400);
 * Content-Type (415); a declared Content-Length over the cap (413) — all before a byte of the body is read; a
 * signature header that is missing, malformed or refused (401), also before the body; then the body, counted as
 * it streams and refused (413) as soon as it passes the cap, buffering no more than the cap; the signature on the
 * raw bytes (401); the JSON object, or a form's `payload` field (400). Rejects with a WebhookDeliveryError
 * (answer it with `sendRefusal`); wrong arguments are a UsageError.
 */
export async function readDelivery(request: IncomingMessage, options: ReadDeliveryOptions): Promise<Delivery> {
  checkRequest(request);
  return (await receiveDelivery(request, checkOptions(options), 'raw')) as Delivery;
}

/** What readDeliveryPayload gives: the delivery without its raw bytes. */
export type DeliveryPayload = Omit<Delivery, 'rawBody'> & {
  /**
   * True when the payload was only checked, not parsed (`checkOnly`): it holds the root object's members as the
   * catalogue check reads them, large objects and arrays standing in — for the check, never for a handler.
   */
  checkOnly?: true;
};

/**
 * readDelivery for the receiver, with its options checked once (not per delivery), reading the payload and not the
 * raw bytes once the signature is checked: the body's buffer is let go before the payload is parsed, so a 25 MB
 * delivery is not its bytes, its text and its object graph at once. With `checkOnly` (no handler will read the
 * payload) a JSON body of 256 KiB or more is checked as JSON.parse would read it, and its root object's members
 * taken for the catalogue check, without parsing the rest. The requests are node:http's own.
 */
export function deliveryPayloadReader(options: ReadDeliveryOptions): (request: IncomingMessage, checkOnly: boolean) => Promise<DeliveryPayload> {
  const settings = checkOptions(options);
  return (request, checkOnly) => {
    checkUnread(request);
    return receiveDelivery(request, settings, checkOnly ? 'check' : 'parse');
  };
}

async function receiveDelivery(request: IncomingMessage, settings: Settings, mode: 'raw' | 'parse' | 'check'): Promise<DeliveryPayload & { rawBody?: Buffer }> {
  if (request.method !== 'POST') {
    throw refuseUnread({
      reason: 'method-not-allowed',
      message: `a delivery is a POST (HOOK-DEL-REQUEST), not ${/^[A-Z]{1,20}$/.test(String(request.method)) ? request.method : 'this method'}`,
      headers: { allow: 'POST' },
    });
  }

  const headers = request.headers;
  const id = oneHeader(headers, deliveryHeaders.delivery);
  const event = oneHeader(headers, deliveryHeaders.event);
  const hookId = oneHeader(headers, deliveryHeaders.hookId);
  const userAgent = oneHeader(headers, deliveryHeaders.userAgent);
  if (id === undefined || event === undefined || hookId === undefined || userAgent === undefined) {
    const missing = requiredHeaders.filter((name) => oneHeader(headers, name) === undefined);
    throw refuseUnread({
      reason: 'missing-header',
      message: `the delivery lacks ${missing.map((name) => titles[name]).join(', ')}: the platform sends ${missing.length === 1 ? 'it' : 'them'} with every delivery (HOOK-HDR-EVENT, HOOK-HDR-DELIVERY, HOOK-HDR-HOOK-ID, HOOK-HDR-USER-AGENT)`,
      header: missing[0]!,
    });
  }
  // The headers every delivery has, each in its one form; the first that is not refuses the delivery.
  const forms: Array<[ok: boolean, refusal: WebhookDeliveryErrorDetails]> = [
    [
      identifierPattern.test(id),
      {
        reason: 'invalid-header',
        message: 'X-Platform-Delivery is not a delivery GUID (letters, digits and - . _ :, at most 128)',
        header: deliveryHeaders.delivery,
      },
    ],
    [
      eventPattern.test(event),
      {
        reason: 'invalid-header',
        message: 'X-Platform-Event is not an event name (lower-case letters, digits and _)',
        header: deliveryHeaders.event,
        deliveryId: id,
      },
    ],
    [
      identifierPattern.test(hookId),
      {
        reason: 'invalid-header',
        message: 'X-Platform-Hook-ID is not a webhook identifier (letters, digits and - . _ :, at most 128)',
        header: deliveryHeaders.hookId,
        deliveryId: id,
      },
    ],
    [
      userAgent.startsWith(hookshotUserAgentPrefix),
      {
        reason: 'bad-user-agent',
        message: `the User-Agent does not start with ${hookshotUserAgentPrefix}, as every delivery's does (HOOK-HDR-USER-AGENT)`,
        header: deliveryHeaders.userAgent,
        deliveryId: id,
      },
    ],
  ];
  const refused = forms.find(([ok]) => !ok);
  if (refused) throw refuseUnread(refused[1]);
  const targetType = oneHeader(headers, deliveryHeaders.targetType);
  const targetId = oneHeader(headers, deliveryHeaders.targetId);

  const contentType = mediaType(oneHeader(headers, deliveryHeaders.contentType), id);

  const lengthHeader = oneHeader(headers, deliveryHeaders.contentLength);
  let declared: number | undefined;
  if (lengthHeader !== undefined) {
    if (!/^\d{1,16}$/.test(lengthHeader)) {
      throw refuseUnread({
        reason: 'invalid-header',
        message: 'Content-Length is not a number of bytes (HOOK-HDR-CONTENT-LENGTH)',
        header: deliveryHeaders.contentLength,
        deliveryId: id,
      });
    }
    declared = Number(lengthHeader);
    if (declared > settings.maxBytes) {
      throw refuseUnread({
        reason: 'payload-too-large',
        message: `the delivery declares ${declared} bytes (Content-Length), over the ${bytesText(settings.maxBytes)} cap (HOOK-LIM-PAYLOAD-25MB); nothing of it was read`,
        hint: 'the platform never delivers a payload over 25 MB; this did not come from it, or the cap (maxBytes) is set below its payloads',
        deliveryId: id,
      });
    }
  }

  // The signature's presence and form need no body: an unsigned or malformed delivery is refused unread.
  const claim = settings.secrets.length > 0 ? requestSignatureClaim(headers, settings.allowSha1) : undefined;
  if (claim && !claim.ok && (settings.requireSignature || claim.reason !== 'missing')) {
    const reason = claim.reason === 'missing' ? 'signature-missing' : claim.reason === 'malformed' ? 'signature-malformed' : 'sha1-refused';
    throw refuseUnread({
      reason,
      message: `${claim.message} (HOOK-AUTH-HMAC)`,
      hint:
        reason === 'sha1-refused'
          ? 'have the platform send X-Hub-Signature-256, or allow SHA-1 (allowSha1, not --no-sha1)'
          : "check that the webhook has a secret and that it is one of the receiver's secrets",
      deliveryId: id,
    });
  }

  // The HMAC is computed as the body arrives.
  const check: SignatureCheck | undefined = claim?.ok ? signatureCheck(settings.secrets, claim.claim) : undefined;
  const bytesSink = new BytesSink(declared, mode !== 'raw', check);
  // Every value taken from the bytes is a copy: once done, a reusable buffer can serve the next large body.
  try {
    const contentLength = await readBody(request, settings.maxBytes, declared, id, bytesSink);

    let signature: Delivery['signature'] = 'none';
    if (check && claim?.ok) {
      const result = check.result();
      if (!result.ok) {
        throw new WebhookDeliveryError({
          reason: 'signature-mismatch',
          message: `${result.message} (HOOK-AUTH-HMAC)`,
          hint: "check that the webhook's secret is one of the receiver's secrets, and that nothing between the platform and the receiver re-encodes the body",
          deliveryId: id,
        });
      }
      signature = result.algorithm;
    }

    let rawBody: Buffer | undefined = bytesSink.bytes();
    if (mode === 'check' && contentType === 'json' && contentLength >= CHECK_ONLY_BYTES) {
      const payload = payloadForCheck(rawBody);
      if (payload !== undefined) return { id, event, hookId, targetType, targetId, userAgent, contentType, contentLength, payload, signature, checkOnly: true };
      // Not a JSON object as the scan sees it: parsed below, for the refusal that says why.
    }
    let text: string | undefined = bodyText(contentType, rawBody, id);
    const kept = mode === 'raw' ? rawBody : undefined;
    // Nothing holds the bytes now (unless the caller wants them): they can go while the text is parsed.
    rawBody = undefined;
    const payload = parseObject(text, contentType === 'json' ? 'the JSON body' : "the form's payload field", id);
    text = undefined;

    return { id, event, hookId, targetType, targetId, userAgent, contentType, contentLength, ...(kept ? { rawBody: kept } : {}), payload, signature };
  } finally {
    bytesSink.release();
  }
}

export interface SendRefusalOptions {
  /**
   * When the body was left unread: how long to keep discarding what the sender still sends after the answer and
   * the half-close, so that closing does not reset the connection before the sender has the answer. Default 2 s.
   */
  lingerMs?: number;
  /** …and at most this many bytes (default 4 MiB); a sender still sending past it has ignored the answer. */
  lingerBytes?: number;
}

/**
 * Answers a refused delivery: its status, the headers it needs (`Allow` on a 405, `Accept-Post` on a 415) and
 * `{ "error": message, "reason": reason }`. When the body was left unread (a refusal before reading, or a body
 * past the cap), the connection is closed after the answer the graceful way: the answer, then a half-close, then
 * what the sender still sends is discarded — never kept — until it closes its side, `lingerMs` passes or
 * `lingerBytes` were discarded. Closing at once with unread bytes would reset the connection, and a reset can
 * discard the answer on its way.
 */
export function sendRefusal(response: ServerResponse, error: WebhookDeliveryError, options: SendRefusalOptions = {}): void {
  expectObject('sendRefusal', 'response', response, 'an http.ServerResponse');
  if (typeof (response as Partial<ServerResponse>).writeHead !== 'function') refuseArgument('sendRefusal', 'response', 'an http.ServerResponse', response);
  if (!(error instanceof WebhookDeliveryError)) refuseArgument('sendRefusal', 'error', 'a WebhookDeliveryError', error);
  expectOptions('sendRefusal', options);
  const lingerMs = options.lingerMs ?? 2000;
  if (!(Number.isFinite(lingerMs) && lingerMs >= 0)) refuseArgument('sendRefusal', 'options.lingerMs', 'a number of milliseconds', lingerMs);
  const lingerBytes = options.lingerBytes ?? 4 * 1024 * 1024;
  if (!(Number.isSafeInteger(lingerBytes) && lingerBytes >= 0)) refuseArgument('sendRefusal', 'options.lingerBytes', 'a whole number of bytes', lingerBytes);
  const request = response.req as IncomingMessage | undefined;
  const unread = request !== undefined && !request.readableEnded;
  if (response.headersSent) {
    if (!response.writableEnded) response.end();
    return;
  }
  const body = `${JSON.stringify({ error: error.message, reason: error.reason })}\n`;
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) };
  for (const [name, value] of Object.entries(error.headers)) if (name !== 'connection') headers[name] = value;
  if (!unread) {
    response.writeHead(error.status, headers);
    response.end(body);
    return;
  }
  // `Connection: close` would make node:http destroy the socket right after the answer, unread bytes and all (a
  // reset, which can discard the answer in the sender's buffers); the half-close and linger below close it cleanly.
  const socket = request.socket;
  response.writeHead(error.status, headers);
  response.end(body, () => {
    if (!socket || socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    socket.once('end', () => socket.destroy());
    request.removeAllListeners('data');
    request.on('error', () => undefined);
    let discarded = 0;
    request.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > lingerBytes) socket.destroy();
    });
    request.resume();
    socket.end();
  });
}
