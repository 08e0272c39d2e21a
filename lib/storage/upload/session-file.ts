/**
 * The session file of a resumable upload: what a new process needs to go on with an upload after the first one died
 * — the session URI (it authorises the upload on its own, so the file is written 0600 and the URI never reaches a
 * log line), the source file and its identity, the chunk size and what started the session (metadata, target file,
 * parameters) so that an expired session can be started again. Written to a temporary name and renamed.
 */
import { readFile, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../../atomic-write.js';
import { UsageError } from '../../errors.js';
import { registerSecret } from '../../http/index.js';
import type { SourceIdentity } from './source.js';

export const SESSION_FILE_KIND = 'gantry#storageUploadSession';

export interface SessionFileContent extends SourceIdentity {
  kind: typeof SESSION_FILE_KIND;
  version: 1;
  /** The resumable session URI (a credential for this upload). */
  sessionUri: string;
  /** The absolute path of the file being uploaded. */
  path: string;
  chunkSize: number;
  /** When the session was started (ISO 8601); a new session after an expiry gets a new time. */
  createdAt: string;
  /** `X-Upload-Content-Type`. */
  contentType: string;
  /** files.update's target, when the upload replaces an existing file's content. */
  fileId?: string;
  metadata?: Record<string, unknown>;
  params?: Record<string, unknown>;
  ifMatch?: string;
}

/**
 * Masks a session URI in every log line and error message from now on: its `upload_id` (Drive's form), so that a
 * message still shows the endpoint, or the whole URI when it has none.
 */
export function protectSessionUri(uri: string): void {
  let id: string | null = null;
  try {
    id = new URL(uri).searchParams.get('upload_id');
  } catch {
    // not a URL: the whole value is masked below
  }
  if (id && id.length >= 8) registerSecret(id);
  else registerSecret(uri);
}

export async function writeSessionFile(file: string, content: SessionFileContent): Promise<void> {
  const target = resolve(file);
  try {
    await writeFileAtomic(target, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`the session file ${target} could not be written (${code ?? (error as Error).message})`, {
      hint: 'give a sessionFile path in a folder you can write in',
    });
  }
}

export async function sessionFileExists(file: string): Promise<boolean> {
  return stat(resolve(file)).then(
    () => true,
    () => false,
  );
}

export async function removeSessionFile(file: string): Promise<void> {
  await rm(resolve(file), { force: true });
}

function fail(file: string, why: string): never {
  throw new UsageError(`the session file ${file} ${why}`, {
    code: 'STORAGE_SESSION_FILE',
    hint: 'start the upload again without it (delete the file), or give the session file an earlier upload wrote',
  });
}

/** Reads and checks a session file; the session URI is registered as a secret before anything else is done with it. */
export async function readSessionFile(file: string): Promise<SessionFileContent> {
  const target = resolve(file);
  let text: string;
  try {
    const info = await stat(target);
    if (!info.isFile()) fail(target, 'is not a regular file');
    if (info.size > 1024 * 1024) fail(target, 'is larger than 1 MiB: not a session file');
    text = await readFile(target, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    fail(target, `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let parsed: Partial<SessionFileContent>;
  try {
    parsed = JSON.parse(text) as Partial<SessionFileContent>;
  } catch {
    fail(target, 'is not JSON');
  }
  if (!parsed || typeof parsed !== 'object' || parsed.kind !== SESSION_FILE_KIND)
    fail(target, `is not a storage upload session file (no "kind": "${SESSION_FILE_KIND}")`);
  if (typeof parsed.sessionUri === 'string') protectSessionUri(parsed.sessionUri);
  if (parsed.version !== 1) fail(target, `has version ${String(parsed.version)}; this Gantry reads version 1`);
  const checks: Array<[keyof SessionFileContent, (v: unknown) => boolean]> = [
    ['sessionUri', (v) => typeof v === 'string' && /^https?:\/\//.test(v)],
    ['path', (v) => typeof v === 'string' && v !== ''],
    ['size', (v) => Number.isSafeInteger(v) && (v as number) >= 0],
    ['mtimeMs', (v) => typeof v === 'number' && Number.isFinite(v)],
    ['ino', (v) => typeof v === 'number' && Number.isFinite(v)],
    ['sample', (v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)],
    ['chunkSize', (v) => Number.isSafeInteger(v) && (v as number) > 0],
    ['createdAt', (v) => typeof v === 'string'],
    ['contentType', (v) => typeof v === 'string' && v !== ''],
    ['fileId', (v) => v === undefined || (typeof v === 'string' && v !== '')],
    ['metadata', (v) => v === undefined || (!!v && typeof v === 'object' && !Array.isArray(v))],
    ['params', (v) => v === undefined || (!!v && typeof v === 'object' && !Array.isArray(v))],
    ['ifMatch', (v) => v === undefined || typeof v === 'string'],
  ];
  for (const [name, ok] of checks) if (!ok(parsed[name])) fail(target, `has no valid "${name}"`);
  return parsed as SessionFileContent;
}
