/**
 * Gate reports published to the storage API (Drive v2 renamed): every report file of every URL, then the summary,
 * uploaded into a folder that must exist, under stable titles that mirror the S3 archive's keys — flat, so that a
 * folder's listing sorts by page and time. Nothing is overwritten, moved or deleted: each publication adds files.
 */
import { expectObject, expectOptions, expectString } from '../arguments.js';
import { CheckFailedError, UsageError } from '../errors.js';
import type { File, StorageClient } from '../storage/index.js';
import { FOLDER_MIME } from '../storage/media-types.js';
import type { GateResult } from './gate.js';
import { archiveKeyPrefix, reportFilesFor, summarize, type GateSummary } from './report.js';

/** A file the publication uploaded: which report it is, its title in the folder, its id and the service's link. */
export interface StoredReportFile {
  /** The report's name as `--report` and the S3 archive name it: `report.html`, `run-1.json`, `gate.json` … */
  name: string;
  title: string;
  id: string;
  mimeType: string;
  /** The service's link to the file (`alternateLink`, else `webContentLink`, else `selfLink`); null when it gave none. */
  link: string | null;
}

/** What the summary says of the publication, at the top and per URL. */
export interface StorageReports {
  folderId: string;
  /** The link of the representative report (the first URL's `report.html`, else its `report.json`). */
  reportUrl: string | null;
  files: StoredReportFile[];
}

export interface StorageGateSummary extends GateSummary {
  urls: Array<GateSummary['urls'][number] & { storage?: StorageReports }>;
  /** The folder, the representative link, and every file uploaded (`gate.json` last). */
  storage: StorageReports;
}

export interface StoragePublishOptions {
  /** Defaults to a client built from STORAGE_BASE_URL and STORAGE_TOKEN (closed when done). */
  client?: StorageClient;
  signal?: AbortSignal;
}

const folderIdPattern = /^[A-Za-z0-9_-]{1,256}$/;

/**
 * A folder id as the storage service writes them (letters, digits, `-` and `_`; `root` for the root folder), checked
 * before anything is sent: a UsageError (exit 2) naming `where` otherwise.
 */
export function checkStorageFolderId(folderId: unknown, where = 'the report folder'): string {
  if (typeof folderId !== 'string' || !folderIdPattern.test(folderId)) {
    const shown = typeof folderId === 'string' ? JSON.stringify(folderId.slice(0, 80)) : folderId === undefined ? 'nothing' : typeof folderId;
    throw new UsageError(`${where}: ${shown} is not a storage folder id (letters, digits, - and _)`, {
      hint: 'give the id of an existing folder, e.g. from `gantry storage ls` or `gantry storage mkdir <name>`',
    });
  }
  return folderId;
}

/**
 * The folder reports go into, asked of the service: it must exist, be a folder and not be in the trash, else a
 * CheckFailedError (exit 1) naming it. Other refusals (401, 403, 5xx) stay StorageErrors with their own exit codes.
 */
export async function checkReportFolder(client: StorageClient, folderId: string, signal?: AbortSignal): Promise<File> {
  checkClient('checkReportFolder', 'client', client);
  checkStorageFolderId(folderId);
  let folder: File;
  try {
    folder = await client.files.get({ fileId: folderId, fields: 'id,title,mimeType,labels', ...(signal ? { signal } : {}) });
  } catch (error) {
    const { StorageError } = await import('../storage/index.js');
    if (error instanceof StorageError && error.status === 404) {
      throw new CheckFailedError(`the report folder ${folderId} was not found in the storage service at ${client.baseUrl}`, {
        code: 'STORAGE_REPORT_FOLDER_NOT_FOUND',
        hint: 'check the folder id (`gantry storage ls`), that the token may see it, or make one with `gantry storage mkdir <name>`',
        cause: error,
      });
    }
    throw error;
  }
  if (folder.mimeType !== FOLDER_MIME) {
    throw new CheckFailedError(`the report folder ${folderId} is not a folder (its type is ${folder.mimeType ?? 'unknown'})`, {
      code: 'STORAGE_REPORT_FOLDER_NOT_FOLDER',
      hint: 'give the id of a folder (application/vnd.google-apps.folder)',
    });
  }
  if (folder.labels?.trashed === true) {
    throw new CheckFailedError(`the report folder ${folderId} is in the trash`, {
      code: 'STORAGE_REPORT_FOLDER_TRASHED',
      hint: `restore it (gantry storage untrash ${folderId}) or give another folder`,
    });
  }
  return folder;
}

/** A title's stem per URL: the S3 archive's key prefix `<host>/<path>-<hash8>/<YYYYMMDDTHHMMSSZ>` with `-` for `/`. */
export function storageTitlePrefix(url: string, analyzedAt: string): string {
  expectString('storageTitlePrefix', 'url', url, 'a page URL');
  expectString('storageTitlePrefix', 'analyzedAt', analyzedAt, "the gate's analyzedAt (an ISO time)");
  return archiveKeyPrefix({ bucket: '', prefix: '' }, url, analyzedAt).replaceAll('/', '-');
}

function checkClient(where: string, name: string, client: unknown): asserts client is StorageClient {
  expectObject(where, name, client, 'a StorageClient (createStorageClient)');
  if (typeof (client as { files?: { get?: unknown } }).files?.get !== 'function' || typeof (client as { transport?: unknown }).transport !== 'object') {
    throw new UsageError(`${where}: ${name} must be a StorageClient (createStorageClient)`, { code: 'INVALID_ARGUMENT' });
  }
}

function linkOf(file: Record<string, unknown>): string | null {
  for (const key of ['alternateLink', 'webContentLink', 'selfLink']) {
    const value = file[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

/** `text/html; charset=utf-8` → `text/html`: the file's type in the folder; the charset still travels with the bytes. */
function bareType(contentType: string): string {
  return contentType.split(';')[0]!.trim();
}

async function put(
  client: StorageClient,
  folderId: string,
  name: string,
  title: string,
  contentType: string,
  content: string,
  signal?: AbortSignal,
): Promise<StoredReportFile> {
  const mimeType = bareType(contentType);
  // One report in memory at a time; above 5 MiB upload() sends it resumable, a chunk at a time, resuming after a cut.
  const { upload } = await import('../storage/upload/index.js');
  const file = await upload(client.transport, {
    source: Buffer.from(content, 'utf8'),
    metadata: { title, mimeType, parents: [{ id: folderId }] },
    mimeType: contentType,
    ...(signal ? { signal } : {}),
  });
  return { name, title, id: file.id, mimeType: typeof file.mimeType === 'string' ? file.mimeType : mimeType, link: linkOf(file) };
}

/**
 * Uploads each URL's reports (`run-<k>.json|html`, `report.json|html`) and then the gate summary into the folder
 * `folderId` of the storage service, as `<host>-<path>-<hash8>-<YYYYMMDDTHHMMSSZ>-<name>` (the summary under the first
 * URL's stem, `…-gate.json`), each with its media type. Sets `result.reportUrl` to the first URL's `report.html` link
 * (else its `report.json`) unless an S3 archive set it already, and returns the summary that was uploaded, with
 * `storage` (the folder, the link, each file's id and link) at the top and per URL.
 *
 * The folder must exist (a CheckFailedError, exit 1, naming it otherwise); nothing is deleted or overwritten.
 */
export async function publishReportsToStorage(result: GateResult, folderId: string, options: StoragePublishOptions = {}): Promise<StorageGateSummary> {
  expectObject('publishReportsToStorage', 'result', result, 'a GateResult from runGate');
  if (!Array.isArray(result.urls) || result.urls.length === 0 || typeof result.analyzedAt !== 'string') {
    throw new UsageError('publishReportsToStorage: result must be a GateResult from runGate, with at least one URL', { code: 'INVALID_ARGUMENT' });
  }
  checkStorageFolderId(folderId);
  expectOptions('publishReportsToStorage', options);
  if (options.client !== undefined) checkClient('publishReportsToStorage', 'options.client', options.client);
  // The storage client loads when reports are published, not with the library.
  const client = options.client ?? (await import('../storage/index.js')).createStorageClient();
  const { signal } = options;
  try {
    await checkReportFolder(client, folderId, signal);
    const perUrl: StorageReports[] = [];
    for (const url of result.urls) {
      const stem = storageTitlePrefix(url.url, result.analyzedAt);
      const files: StoredReportFile[] = [];
      let reportUrl: string | null = null;
      for (const report of reportFilesFor(url)) {
        const stored = await put(client, folderId, report.name, `${stem}-${report.name}`, report.contentType, report.content(), signal);
        files.push(stored);
        if (report.name === 'report.html' || (report.name === 'report.json' && reportUrl === null)) reportUrl = stored.link;
      }
      perUrl.push({ folderId, reportUrl, files });
    }
    const first = perUrl[0]!;
    if (!result.reportUrl && first.reportUrl) result.reportUrl = first.reportUrl;
    const base = summarize(result);
    const summary: StorageGateSummary = {
      ...base,
      urls: base.urls.map((url, index) => ({ ...url, storage: perUrl[index]! })),
      storage: { folderId, reportUrl: first.reportUrl, files: perUrl.flatMap((url) => url.files) },
    };
    // gate.json holds the summary as it stands before its own upload; the summary returned names gate.json too.
    const gateTitle = `${storageTitlePrefix(result.urls[0]!.url, result.analyzedAt)}-gate.json`;
    const gate = await put(client, folderId, 'gate.json', gateTitle, 'application/json', JSON.stringify(summary, null, 2), signal);
    summary.storage = { ...summary.storage, files: [...summary.storage.files, gate] };
    return summary;
  } finally {
    if (!options.client) client.close();
  }
}
