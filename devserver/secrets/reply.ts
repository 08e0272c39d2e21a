/** Responses in the service's shapes: the envelope every success carries, and `{errors: [...]}` for failures. */
import { HttpFailure } from '../kit/index.js';

export type { Reply } from '../kit/index.js';

export interface EnvelopeParts {
  data?: unknown;
  auth?: unknown;
  warnings?: string[] | null;
  lease_duration?: number;
  renewable?: boolean;
  mount_type?: string;
}

/** A failure carried up from deep inside a handler to the dispatcher, answered as `{errors}` (or `body` when given). */
export class Failure extends HttpFailure {
  constructor(
    status: number,
    readonly errors: string[],
    readonly body?: unknown,
  ) {
    super(status, errors.join('; ') || `status ${status}`);
  }
}

export const fail = (status: number, ...errors: string[]) => new Failure(status, errors);
export const badRequest = (message: string) => new Failure(400, [message]);
export const permissionDenied = () => new Failure(403, ['permission denied']);
/** Not found, with the empty errors list the service uses for a missing key or an empty list. */
export const notFound = () => new Failure(404, []);
export const unsupportedPath = () => new Failure(404, ['unsupported path']);
export const unsupportedOperation = () => new Failure(405, ['unsupported operation']);

export function envelope(requestId: string, parts: EnvelopeParts) {
  return {
    request_id: requestId,
    lease_id: '',
    renewable: parts.renewable ?? false,
    lease_duration: parts.lease_duration ?? 0,
    data: parts.data ?? null,
    wrap_info: null,
    warnings: parts.warnings && parts.warnings.length ? parts.warnings : null,
    auth: parts.auth ?? null,
    mount_type: parts.mount_type ?? '',
  };
}

/**
 * 404 that still carries the envelope (a deleted or destroyed version with its metadata, a bare path on a v2 mount
 * with its warning), as the reference server does. `errors: []` is added so the body also meets the rule that every
 * status of 400 or above has an `errors` array; clients reading the envelope ignore it.
 */
export function notFoundWithEnvelope(requestId: string, parts: EnvelopeParts): Failure {
  return new Failure(404, [], { ...envelope(requestId, parts), errors: [] });
}

/** What a handler returns: data for a 200 envelope, or nothing for 204 (200 when there are warnings). */
export interface Outcome extends EnvelopeParts {
  /** a body sent as it is, not wrapped (seal-status, health, help) */
  raw?: unknown;
  status?: number;
}
