/**
 * A webhook delivery the receiver refuses: each refusal carries the HTTP status to answer with, a stable reason code,
 * the response headers the answer needs (`Allow` on a 405, `Connection: close` when the body was left unread) and a
 * message that names what was wrong — a header's name, a byte count, where JSON breaks — but never quotes the body,
 * a secret or a signature value.
 */
import { ExitCode, GantryError } from '../errors.js';

/**
 * Every `code` the webhooks area raises besides a refused delivery's (`WEBHOOK_<REASON>`, from its reason): the
 * receiver's and the queues' own, the hooks file's, and `gantry hooks verify`'s (test/architecture/exit-codes.test.ts
 * holds lib/ to the list). Each raising site checks its code against the union (`code: 'X' satisfies WebhookErrorCode`).
 */
export const webhookErrorCodes = [
  'WEBHOOK_BODY_CONSUMED',
  'WEBHOOK_CONFIG',
  'WEBHOOK_NO_SECRET',
  'WEBHOOK_PAYLOAD',
  'WEBHOOK_PROTECTION_PAYLOAD',
  'WEBHOOK_QUEUE',
  'WEBHOOK_QUEUE_CLOSED',
  'WEBHOOK_SIGNATURE',
] as const;
export type WebhookErrorCode = (typeof webhookErrorCodes)[number];

/** Why a delivery was refused; each reason has one HTTP status (`webhookRefusalStatus`). */
export type WebhookRefusalReason =
  | 'method-not-allowed'
  | 'missing-header'
  | 'invalid-header'
  | 'bad-user-agent'
  | 'unsupported-media-type'
  | 'payload-too-large'
  | 'content-length-mismatch'
  | 'aborted'
  | 'signature-missing'
  | 'signature-malformed'
  | 'signature-mismatch'
  | 'sha1-refused'
  | 'malformed-json'
  | 'payload-not-object'
  | 'malformed-form'
  | 'missing-form-payload'
  | 'duplicate-form-payload';

/** The HTTP status answered for each reason. */
export const webhookRefusalStatus: Readonly<Record<WebhookRefusalReason, number>> = {
  'method-not-allowed': 405,
  'missing-header': 400,
  'invalid-header': 400,
  'bad-user-agent': 400,
  'unsupported-media-type': 415,
  'payload-too-large': 413,
  'content-length-mismatch': 400,
  aborted: 400,
  'signature-missing': 401,
  'signature-malformed': 401,
  'signature-mismatch': 401,
  'sha1-refused': 401,
  'malformed-json': 400,
  'payload-not-object': 400,
  'malformed-form': 400,
  'missing-form-payload': 400,
  'duplicate-form-payload': 400,
};

export interface WebhookDeliveryErrorDetails {
  reason: WebhookRefusalReason;
  /** Already free of body content, secrets and signature values. */
  message: string;
  hint?: string;
  /** Headers the answer must carry, lower-case names. */
  headers?: Record<string, string>;
  /** The header a `missing-header` / `invalid-header` refusal is about, lower-case. */
  header?: string;
  /** The delivery's GUID when the refusal came after the headers were read. */
  deliveryId?: string;
  cause?: unknown;
}

/**
 * A refused delivery. `status` is what to answer, `reason` the stable code (also in `code` as
 * `WEBHOOK_SIGNATURE_MISMATCH` …). Exit code 1, a definite "no" — except `aborted` (the sender went away in the
 * middle of the body), 3, the remote side failing.
 */
export class WebhookDeliveryError extends GantryError {
  readonly status: number;
  readonly reason: WebhookRefusalReason;
  readonly headers: Readonly<Record<string, string>>;
  readonly header: string | undefined;
  readonly deliveryId: string | undefined;

  constructor(details: WebhookDeliveryErrorDetails) {
    super(details.message, {
      exitCode: details.reason === 'aborted' ? ExitCode.remote : ExitCode.checkFailed,
      code: `WEBHOOK_${details.reason.toUpperCase().replace(/-/g, '_')}`,
      ...(details.hint === undefined ? {} : { hint: details.hint }),
      ...(details.cause === undefined ? {} : { cause: details.cause }),
    });
    this.status = webhookRefusalStatus[details.reason];
    this.reason = details.reason;
    this.headers = Object.freeze({ ...(details.headers ?? {}) });
    this.header = details.header;
    this.deliveryId = details.deliveryId;
  }
}
