/**
 * The storage API's answers as typed errors. Drive v2's error body is `{error: {code, message, errors: [{domain,
 * reason, message, location, locationType}]}}`; the first reason says what happened and picks the advice.
 */
import { terminalText } from '../terminal-text.js';
import { ExitCode, GantryError, exitCodeForStatus } from '../errors.js';
import { HttpError } from '../http/index.js';
import { redact, redactUrl } from '../redact.js';

/** One entry of the error body's `errors` array. */
export interface StorageErrorItem {
  domain?: string;
  reason?: string;
  message?: string;
  location?: string;
  locationType?: string;
}

/** Reasons that mean "not now": the request was not carried out and may be sent again later. */
export const rateLimitReasons = ['userRateLimitExceeded', 'rateLimitExceeded'] as const;

function readItems(body: unknown): { message?: string; items: StorageErrorItem[] } {
  const error = (body as { error?: unknown } | undefined)?.error;
  if (!error || typeof error !== 'object') return { items: [] };
  const { message, errors } = error as { message?: unknown; errors?: unknown };
  const items = Array.isArray(errors)
    ? errors.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object').map((e) => {
        const item: StorageErrorItem = {};
        for (const key of ['domain', 'reason', 'message', 'location', 'locationType'] as const) {
          if (typeof e[key] === 'string') item[key] = redact(e[key]);
        }
        return item;
      })
    : [];
  return { ...(typeof message === 'string' ? { message: redact(message) } : {}), items };
}

const hints: Record<string, string> = {
  required: 'the request carried no credentials: set STORAGE_TOKEN, or log in with `gantry auth login --scope storage.file`',
  authError: 'the token is wrong, expired or revoked: run `gantry auth refresh` (or log in again), or set a valid STORAGE_TOKEN',
  insufficientPermissions: "the token's user may not do this to the file: ask its owner for a role that allows it (share)",
  insufficientScopes: 'the token lacks a scope this method needs: log in again with `--scope storage.file` (or `storage`)',
  notFound: 'no such file, or the token may not see it: check the id (`gantry storage ls`) and who it is shared with',
  conditionNotMet: 'the file changed since its etag was read (If-Match): read it again and retry the change on the new version',
  exportSizeLimitExceeded: 'files.export is limited to 10 MB: download the file itself with `gantry storage get` (alt=media) instead',
  fileNotExportable: 'only storage documents (application/vnd.google-apps.*) can be exported: use `gantry storage get` to download other files',
  cannotDeleteOnlyRevision: 'a file keeps at least one revision: delete the file, or upload a new revision first',
  cannotModifyRootFolder: 'the root folder cannot be changed, trashed or deleted',
  cannotRemoveOwner: 'the owner keeps access: transfer ownership in the service first',
  channelIdNotUnique: 'a watch channel with this id exists: use a new id (a UUID) for every channel',
  userRateLimitExceeded: 'the per-user rate limit was hit and the retries are spent: slow down or try again later',
  rateLimitExceeded: 'the project rate limit was hit and the retries are spent: try again later',
  badContent: 'the upload session and the bytes sent disagree: start the upload again',
  invalid: 'a parameter has a value the service refuses; the location names which',
  badRequest: 'the service refused the request as it stands: the message says what, the location where',
};

/** Hints for an answer whose location says more than its reason: `<status> <location>`. */
const locationHints: Record<string, string> = {
  '400 convertTo': 'the document cannot be exported as that type: ask for one its exportLinks (files.get) offer, e.g. application/pdf or text/plain',
  '403 role': 'sharing grants reader, commenter or writer; ownership is not transferred by sharing',
  '400 addParents': 'a folder cannot go inside itself or one of its own subfolders, and added parents must be folders',
  '400 q': 'the search query is malformed: the message says what and where (docs/storage.md lists the language)',
  '404 revisionId': 'no such revision of the file: `gantry storage revisions <id>` lists them',
};

function hintFor(status: number, reason: string | undefined, message: string | undefined, location?: string): string {
  // Google answers a token without the API's scope with insufficientPermissions too; only its message tells them apart.
  if (reason === 'insufficientPermissions' && message && /authentication scopes/i.test(message)) return hints.insufficientScopes!;
  const byLocation = location !== undefined ? locationHints[`${status} ${location}`] : undefined;
  if (byLocation) return byLocation;
  if (reason && hints[reason]) return hints[reason];
  if (status === 401) return hints.authError!;
  if (status === 404) return hints.notFound!;
  if (status === 412) return hints.conditionNotMet!;
  if (status >= 500) return 'the storage service failed; try again later';
  return 'check the request';
}

export interface StorageErrorDetails {
  status: number;
  method: string;
  url: string;
  body?: unknown;
  rawBody?: string | undefined;
  attempts?: number;
}

/**
 * A refused or failed storage request. Exit 1 for a definite "no" (404, 403 permission, 412 conflict, 400), 3 for
 * the service failing or still rate-limiting after the retries (5xx, 429, 403 with a rate-limit reason).
 */
export class StorageError extends GantryError {
  readonly status: number;
  readonly method: string;
  /** Redacted. */
  readonly url: string;
  /** The first `errors[].reason` (`notFound`, `conditionNotMet`, `userRateLimitExceeded`, …). */
  readonly reason: string | undefined;
  /** The first error's `location` (a parameter or header name), when the service gave one. */
  readonly location: string | undefined;
  readonly errors: StorageErrorItem[];
  /** The service's own message. */
  readonly storageMessage: string | undefined;
  readonly attempts: number;

  constructor(details: StorageErrorDetails) {
    const { message, items } = readItems(details.body);
    const reason = items[0]?.reason;
    const location = items[0]?.location;
    const url = redactUrl(details.url);
    const attempts = details.attempts ?? 1;
    const said = message ?? (details.rawBody ? `non-JSON body: ${redact(details.rawBody.replace(/\s+/g, ' ').trim().slice(0, 300))}` : undefined);
    const rateLimited = reason !== undefined && (rateLimitReasons as readonly string[]).includes(reason);
    super(
      `${details.method} ${url} answered ${details.status}${attempts > 1 ? ` after ${attempts} attempts` : ''}` +
        terminalText(`${reason ? ` ${reason}` : ''}${location ? ` (${location})` : ''}${said ? `: ${said}` : ''}`),
      {
        hint: hintFor(details.status, reason, message, location),
        exitCode: rateLimited ? ExitCode.remote : exitCodeForStatus(details.status),
        code: `STORAGE_${reason ? reason.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase() : details.status}`,
      },
    );
    this.status = details.status;
    this.method = details.method;
    this.url = url;
    this.reason = reason;
    this.location = location;
    this.errors = items;
    this.storageMessage = message;
    this.attempts = attempts;
  }
}

/** The storage error an HttpError stands for; any other error is handed back as it is. */
export function toStorageError(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  return new StorageError({ status: error.status, method: error.method, url: error.url, body: error.body, rawBody: error.rawBody, attempts: error.attempts });
}
