/**
 * The storage API's answers as typed errors. Drive v2's error body is `{error: {code, message, errors: [{domain,
 * reason, message, location, locationType}]}}`; the first reason says what happened and picks the advice.
 */
import { HttpError, ServiceError, type HintTable, type ServiceErrorDetails } from '../http/index.js';
import { redact } from '../redact.js';

/**
 * Every `code` the storage area raises: `STORAGE_<REASON>` (or `STORAGE_<status>`) for an answer, and these
 * (test/architecture/exit-codes.test.ts holds lib/ and providers/ to the list).
 */
export const storageErrorCodes = [
  'STORAGE_NO_TOKEN',
  'STORAGE_NO_BASE_URL',
  'STORAGE_CONFIRM',
  'STORAGE_FOLDER_NOT_EMPTY',
  'STORAGE_MD5_MISMATCH',
  'STORAGE_MD5_UNCHECKED',
  'STORAGE_MOVE_INTO_ITSELF',
  'STORAGE_NOT_A_FILE',
  'STORAGE_NOT_A_FOLDER',
  'STORAGE_NOT_EXPORTABLE',
  'STORAGE_REPORT_FOLDER_NOT_FOLDER',
  'STORAGE_REPORT_FOLDER_NOT_FOUND',
  'STORAGE_REPORT_FOLDER_TRASHED',
  'STORAGE_SESSION_FILE',
  'STORAGE_SOURCE_CHANGED',
  'STORAGE_SOURCE_CHANGED_DURING_UPLOAD',
  'STORAGE_STILL_TRASHED',
  'STORAGE_TRANSFER_GAVE_UP',
  'STORAGE_UPLOAD_IN_PROGRESS',
  'STORAGE_UPLOAD_PENDING',
] as const;
export type StorageErrorCode = (typeof storageErrorCodes)[number] | `STORAGE_${string}`;

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
    ? errors
        .filter((e): e is Record<string, unknown> => !!e && typeof e === 'object')
        .map((e) => {
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

/** The advice for an answer's reason, or for where it points; undefined leaves it to the status. */
function reasonHint(status: number, reason: string | undefined, message: string | undefined, location: string | undefined): string | undefined {
  // Google answers a token without the API's scope with insufficientPermissions too; only its message tells them apart.
  if (reason === 'insufficientPermissions' && message && /authentication scopes/i.test(message)) return hints.insufficientScopes!;
  return (location !== undefined ? locationHints[`${status} ${location}`] : undefined) ?? (reason ? hints[reason] : undefined);
}

/** The advice by status, for an answer whose reason has none. */
const statusHints: HintTable = {
  401: hints.authError,
  404: hints.notFound,
  412: hints.conditionNotMet,
  '5xx': 'the storage service failed; try again later',
  other: 'check the request',
};

export type StorageErrorDetails = Omit<ServiceErrorDetails, 'hint'>;

/**
 * A refused or failed storage request. Exit 1 for a definite "no" (404, 403 permission, 412 conflict, 400), 3 for
 * the service failing or still rate-limiting after the retries (5xx, 429, 403 with a rate-limit reason).
 */
export class StorageError extends ServiceError<StorageErrorItem> {
  declare readonly code: StorageErrorCode;
  declare readonly errors: StorageErrorItem[];
  /** The first `errors[].reason` (`notFound`, `conditionNotMet`, `userRateLimitExceeded`, …). */
  readonly reason: string | undefined;
  /** The first error's `location` (a parameter or header name), when the service gave one. */
  readonly location: string | undefined;
  /** The service's own message. */
  readonly storageMessage: string | undefined;

  constructor(details: StorageErrorDetails) {
    const { message, items } = readItems(details.body);
    const reason = items[0]?.reason;
    const location = items[0]?.location;
    const said = message ?? (details.rawBody ? `non-JSON body: ${details.rawBody.replace(/\s+/g, ' ').trim().slice(0, 300)}` : undefined);
    super(
      details,
      {
        said: `${reason ? ` ${reason}` : ''}${location ? ` (${location})` : ''}${said ? `: ${said}` : ''}`,
        errors: items,
        hint: reasonHint(details.status, reason, message, location),
        code: `STORAGE_${reason ? reason.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase() : details.status}`,
        notNow: reason !== undefined && (rateLimitReasons as readonly string[]).includes(reason),
      },
      statusHints,
    );
    this.reason = reason;
    this.location = location;
    this.storageMessage = message;
  }
}

/** The storage error an HttpError stands for; any other error is handed back as it is. */
export function toStorageError(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  return new StorageError({ status: error.status, method: error.method, url: error.url, body: error.body, rawBody: error.rawBody, attempts: error.attempts });
}
