// The content actions of `gantry storage`: put (media, multipart, or resumable above 5 MiB with a session file that a
// later `put --resume` goes on from), get (a download resumed from its partial file, or to stdout), export. Progress
// with bytes and rate on a terminal; Ctrl-C leaves what can be resumed and says how.
import { terminalText } from '../../../terminal-text.js';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { lstat, readFile, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CheckFailedError, ExitCode, GantryError, shown } from '../../../errors.js';
import { checkWritableFile, ensureFolder } from '../../../local-paths.js';
import type { Logger } from '../../../log.js';
import { takeProcessLock, type ProcessLock } from '../../../process-lock.js';
import type { StorageClient, UploadedFile } from '../../../storage/index.js';
import { usage, type CliContext } from '../../context.js';
import { storageBase, type StorageFlags } from './client.js';
import {
  checkId,
  checkMediaType,
  checkTitle,
  checkUploadSource,
  ensureUploadStateDir,
  EXPORT_EXTENSIONS,
  formatBytes,
  localNameFor,
  sessionFileFor,
  stampChange,
  stampOf,
} from './input.js';
import { shellQuote } from '../../shell-quote.js';
import { interruption, transferProgress, withHint, withStorage, type Interruption } from './run.js';

/** How often `put` looks at the file it is sending. */
const WATCH_MS = 200;

interface PutFlags extends StorageFlags {
  parent?: string;
  name?: string;
  mime?: string;
  resume?: boolean;
  restart?: boolean;
  replace?: string;
}

/** A session file's start time, for the message about a waiting upload (nothing when it cannot be read). */
async function startedAt(sessionFile: string): Promise<string | undefined> {
  try {
    const saved = JSON.parse(await readFile(sessionFile, 'utf8')) as { createdAt?: unknown };
    return typeof saved.createdAt === 'string' ? saved.createdAt : undefined;
  } catch {
    return undefined;
  }
}

export async function putAction(file: string, flags: PutFlags, command: Command, context: CliContext): Promise<void> {
  if (flags.resume) {
    const fixed = (['parent', 'name', 'mime', 'replace'] as const).filter((name) => flags[name] !== undefined).map((name) => `--${name}`);
    if (fixed.length > 0)
      throw usage(
        `--resume goes on with the upload as it was started: ${fixed.join(', ')} cannot change it`,
        `gantry storage put --resume ${shellQuote(file)}, or start over with --restart and the new flags`,
      );
    if (flags.restart)
      throw usage('--resume and --restart contradict each other', '--resume goes on with the interrupted upload, --restart discards it and starts over');
  }
  const parent = flags.parent !== undefined ? checkId(flags.parent, '--parent') : undefined;
  const replace = flags.replace !== undefined ? checkId(flags.replace, '--replace') : undefined;
  if (parent !== undefined && replace !== undefined)
    throw usage(
      '--parent is for a new file; --replace uploads a new revision of a file where it is',
      `move it with: gantry storage mv ${replace} --to ${parent}`,
    );
  const name = flags.name !== undefined ? checkTitle(flags.name, '--name') : undefined;
  const mime = flags.mime !== undefined ? checkMediaType(flags.mime) : undefined;
  const source = await checkUploadSource(file);
  const baseUrl = await storageBase(flags, process.env);
  const { SIMPLE_UPLOAD_LIMIT } = await import('../../../storage/index.js');
  const sessionFile = sessionFileFor(baseUrl, source.path);
  const resumable = flags.resume === true || source.size > SIMPLE_UPLOAD_LIMIT;
  let lock: ProcessLock | undefined;
  if (
    resumable ||
    (await stat(sessionFile).then(
      () => true,
      () => false,
    ))
  ) {
    await ensureUploadStateDir();
    lock = await uploadLock(sessionFile, source.path, baseUrl, file);
  }
  try {
    await putLocked(file, flags, command, context, { source, baseUrl, sessionFile, resumable, parent, replace, name, mime });
  } finally {
    await lock?.release();
  }
}

/**
 * One process at a time per upload session: a second `put` of the same file to the same service while the first
 * runs would otherwise be told to `--resume` it, and the two would take turns cutting each other's chunks.
 */
async function uploadLock(sessionFile: string, path: string, baseUrl: string, file: string): Promise<ProcessLock> {
  const taken = await takeProcessLock(`${sessionFile}.lock`);
  if ('lock' in taken) return taken.lock;
  const { pid, host, since } = taken.heldBy;
  throw new GantryError(
    `an upload of ${shown(path)} to ${baseUrl} is in progress in process ${pid}${host === hostname() ? '' : ` on ${host}`}, since ${since}`,
    {
      exitCode: ExitCode.checkFailed,
      code: 'STORAGE_UPLOAD_IN_PROGRESS',
      hint: `wait for it to finish, or stop it (kill ${pid}) and go on with: gantry storage put --resume ${shellQuote(file)}`,
    },
  );
}

interface PutPlan {
  source: { path: string; size: number };
  baseUrl: string;
  sessionFile: string;
  resumable: boolean;
  parent: string | undefined;
  replace: string | undefined;
  name: string | undefined;
  mime: string | undefined;
}

async function putLocked(file: string, flags: PutFlags, command: Command, context: CliContext, plan: PutPlan): Promise<void> {
  const { json } = context.globals(command);
  const { out, logger } = context;
  const { source, baseUrl, sessionFile, resumable, parent, replace, name, mime } = plan;
  const pending = await stat(sessionFile).then(
    (info) => info.isFile(),
    () => false,
  );
  if (flags.resume && !pending) {
    throw usage(`no interrupted upload of ${shown(source.path)} to ${baseUrl} to resume`, `upload it with: gantry storage put ${shellQuote(file)}`);
  }
  if (pending && !flags.resume && !flags.restart) {
    const since = await startedAt(sessionFile);
    throw new GantryError(
      `an interrupted upload of ${shown(source.path)} to ${baseUrl}${since ? `, started ${since},` : ''} is waiting to be finished (${sessionFile})`,
      {
        exitCode: ExitCode.usage,
        code: 'STORAGE_UPLOAD_PENDING',
        hint: `go on from where it stopped with: gantry storage put --resume ${shellQuote(file)} — or start over: gantry storage put --restart ${shellQuote(file)} (with the flags you gave)`,
      },
    );
  }

  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME, resumeUpload, upload } = await import('../../../storage/index.js');
    if (replace !== undefined && !flags.resume) {
      // A folder has no content to replace: said from its metadata, before a byte is sent.
      const target = await client.files.get({ fileId: replace, fields: 'id,title,mimeType' });
      if (target.mimeType === FOLDER_MIME) {
        throw new CheckFailedError(`--replace ${replace}: ${target.title ?? replace} is a folder, which has no content to replace`, {
          code: 'STORAGE_NOT_A_FILE',
          hint: `upload into it with: gantry storage put ${shellQuote(file)} --parent ${replace}`,
        });
      }
    }
    if (pending && flags.restart) {
      await rm(sessionFile, { force: true });
      out.note(`Discarded the interrupted upload of ${source.path}; starting over.`);
    }
    const stamp = await stampOf(source.path);
    const title = name ?? (replace === undefined ? basename(source.path) : undefined);
    const metadata = { ...(title !== undefined ? { title } : {}), ...(parent ? { parents: [{ id: parent }] } : {}), ...(mime ? { mimeType: mime } : {}) };
    const progress = transferProgress(out, `put ${basename(source.path)}`, source.size);
    const stop = interruption();
    // A file that changes while it is read would be stored as a mix of old and new bytes, and one that shrinks would
    // leave a chunk short of its Content-Length: the file is looked at while it is sent, and a change stops the upload.
    const changed = new AbortController();
    let change: string | undefined;
    const watching = stamp
      ? setInterval(
          () =>
            void stampOf(source.path).then((now) => {
              change ??= stampChange(stamp, now);
              if (change && !changed.signal.aborted)
                changed.abort(new GantryError(`${source.path} changed`, { exitCode: ExitCode.checkFailed, code: 'STORAGE_SOURCE_CHANGED_DURING_UPLOAD' }));
            }),
          WATCH_MS,
        )
      : undefined;
    watching?.unref();
    let uploaded: UploadedFile;
    try {
      const common = {
        onProgress: ({ sent, total }: { sent: number; total: number }) => progress.update(sent, total),
        signal: AbortSignal.any([stop.signal, changed.signal]),
        logger,
      };
      uploaded = flags.resume
        ? await resumeUpload(client.transport, sessionFile, common)
        : await upload(client.transport, {
            source: source.path,
            ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
            ...(replace !== undefined ? { fileId: replace } : {}),
            ...(mime !== undefined ? { mimeType: mime } : {}),
            ...(resumable ? { sessionFile } : {}),
            ...common,
          });
      progress.done();
    } catch (error) {
      progress.done();
      if (stop.reason()) {
        const kept = await stat(sessionFile).then(
          () => true,
          () => false,
        );
        out.note(
          kept
            ? `Interrupted: the service keeps what it received. Go on with: gantry storage put --resume ${shellQuote(file)}`
            : 'Interrupted: nothing was stored.',
        );
        process.exitCode = stop.exitCode();
        return;
      }
      change ??= stamp ? stampChange(stamp, await stampOf(source.path)) : undefined;
      if (change) {
        // Its session cannot be resumed with other bytes: the next put starts over.
        if (resumable) await rm(sessionFile, { force: true });
        throw changedDuringUpload(source.path, change, undefined, replace);
      }
      throw putHint(error, file);
    } finally {
      clearInterval(watching);
      stop.dispose();
    }
    change ??= stamp ? stampChange(stamp, await stampOf(source.path)) : undefined;
    if (change) {
      // The stored bytes may be a mix of the old and new content: a new file is trashed rather than left to be used.
      const trashed =
        replace === undefined
          ? await client.files.trash({ fileId: uploaded.id }).then(
              () => true,
              () => false,
            )
          : false;
      throw changedDuringUpload(source.path, change, { id: uploaded.id, trashed }, replace);
    }
    if (json) out.json(uploaded);
    else {
      const size = Number(uploaded.fileSize ?? source.size);
      out.line(
        `Uploaded ${source.path} as ${terminalText(uploaded.title)} (${terminalText(uploaded.id)}), ${formatBytes(size)}${uploaded.md5Checksum ? `, md5 ${uploaded.md5Checksum}` : ''}${replace !== undefined ? ': a new revision' : ''}`,
      );
    }
  });
}

function changedDuringUpload(path: string, change: string, stored: { id: string; trashed: boolean } | undefined, replace: string | undefined): GantryError {
  const what =
    stored === undefined
      ? 'the upload was stopped; nothing was stored'
      : stored.trashed
        ? `the stored copy ${stored.id} may mix old and new bytes and was moved to the trash`
        : `${replace !== undefined ? `the new revision of ${stored.id}` : `the stored copy ${stored.id}`} may mix old and new bytes`;
  return new CheckFailedError(`${shown(path)} changed while it was being uploaded (${change}): ${what}`, {
    code: 'STORAGE_SOURCE_CHANGED',
    hint: 'upload it again once nothing writes to it (copy it aside first if it keeps changing)',
  });
}

/** The library's hints name resumeUpload and session files; the command's name `put --resume` and `--restart`. */
function putHint(error: unknown, file: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'STORAGE_TRANSFER_GAVE_UP')
    return withHint(error, `the service keeps what it received: go on later with gantry storage put --resume ${shellQuote(file)}`);
  if (code === 'STORAGE_SOURCE_CHANGED')
    return withHint(
      error,
      `put the original file back and run gantry storage put --resume ${shellQuote(file)} again, or start over with gantry storage put --restart ${shellQuote(file)}`,
    );
  if (code === 'STORAGE_SESSION_FILE') return withHint(error, `start over with gantry storage put --restart ${shellQuote(file)}`);
  return error;
}

/** Where `-o` sends the content: stdout, a file, or a folder the file goes into under its title. */
type Output = { kind: 'stdout' } | { kind: 'file'; path: string } | { kind: 'folder'; path: string };

/** `-o` checked before anything is sent: a missing folder, or something that is no file or folder, is exit 2. */
async function checkOutput(output: string | undefined): Promise<Output> {
  if (output === '-') return { kind: 'stdout' };
  if (output === undefined) return { kind: 'folder', path: await ensureFolder(process.cwd(), 'the current folder') };
  if (output.trim() === '') throw usage('-o is empty', 'give a file, a folder, or - for stdout');
  const path = resolve(output);
  const info = await stat(path).catch(() => undefined);
  if (info?.isDirectory()) return { kind: 'folder', path: await ensureFolder(path, 'the output folder') };
  if (output.endsWith('/')) throw usage(`-o ${shown(output)}: the folder ${shown(path)} does not exist`, 'create it first, or give a file name');
  return { kind: 'file', path: await checkWritableFile(path, 'the output file') };
}

/**
 * The file the content goes to. A name made from the title never replaces a file that is already there (it may be the
 * very file that was uploaded): only a path given with -o is replaced, as the user asked.
 */
async function targetIn(output: Output, name: string): Promise<string> {
  if (output.kind !== 'folder') return (output as { path: string }).path;
  const path = join(output.path, name);
  if (
    await lstat(path).then(
      () => true,
      () => false,
    )
  ) {
    throw usage(
      `${shown(path)} already exists: a name taken from the title does not replace a file`,
      `give -o ${shellQuote(path)} to replace it, or -o with another name`,
    );
  }
  return checkWritableFile(path, 'the output file');
}

interface GetFlags extends StorageFlags {
  output?: string;
  revision?: string;
}

export async function getAction(id: string, flags: GetFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  const { out, logger } = context;
  checkId(id);
  const revision = flags.revision !== undefined ? checkId(flags.revision, '--revision') : undefined;
  if (json && flags.output === '-') throw usage('--json and -o - both want stdout', 'write the content to a file (-o <file>) to get the JSON summary');
  const output = await checkOutput(flags.output);
  await withStorage(flags, context, async ({ client }) => {
    // Loaded here, not at the top: bad input is refused without loading lib/storage.
    const { FOLDER_MIME, isServiceDocument } = await import('../../../storage/index.js');
    const meta = await client.files.get({ fileId: id, fields: 'id,title,mimeType,fileSize,md5Checksum' });
    if (meta.mimeType === FOLDER_MIME)
      throw new CheckFailedError(`${id} is the folder ${meta.title}: only files have content to download`, {
        code: 'STORAGE_NOT_A_FILE',
        hint: `list it with: gantry storage ls ${id}`,
      });
    if (isServiceDocument(meta.mimeType)) {
      throw new CheckFailedError(`${id} is a storage document (${meta.mimeType}): it has no content of its own to download`, {
        code: 'STORAGE_NOT_A_FILE',
        hint: `export it: gantry storage export ${id} --mime text/plain (or application/pdf, text/csv …)`,
      });
    }
    const stop = interruption({ reader: output.kind === 'stdout' });
    const label = meta.title ?? id;
    try {
      if (output.kind === 'stdout') {
        const revisionMeta = revision === undefined ? meta : await client.revisions.get({ fileId: id, revisionId: revision });
        const bytes = await contentToStdout(
          client,
          {
            url: `storage/v2/files/${encodeURIComponent(id)}`,
            searchParams: { alt: 'media', ...(revision !== undefined ? { revisionId: revision } : {}) },
            resumable: true,
            md5: revisionMeta.md5Checksum,
            total: revisionMeta.fileSize !== undefined ? Number(revisionMeta.fileSize) : undefined,
            label,
          },
          stop,
          logger,
          transferProgress(out, `get ${label}`, meta.fileSize !== undefined ? Number(meta.fileSize) : undefined),
        );
        logger.debug(`${bytes} bytes of ${id} written to stdout`);
        return;
      }
      const path = await targetIn(output, localNameFor(meta.title, id));
      const { download } = await import('../../../storage/index.js');
      const progress = transferProgress(out, `get ${label}`, meta.fileSize !== undefined ? Number(meta.fileSize) : undefined);
      let result;
      try {
        result = await download(client.transport, id, {
          path,
          ...(revision !== undefined ? { revisionId: revision } : {}),
          onProgress: ({ received, total }) => progress.update(received, total),
          signal: stop.signal,
          logger,
        });
      } finally {
        progress.done();
      }
      if (result.resumedFrom > 0) out.note(`Went on from byte ${result.resumedFrom}, which an earlier run had received.`);
      if (json)
        out.json({
          id,
          title: meta.title,
          path: result.path,
          bytes: result.bytes,
          md5Checksum: result.md5Checksum ?? null,
          resumedFrom: result.resumedFrom,
          ...(revision !== undefined ? { revisionId: revision } : {}),
        });
      else
        out.line(
          `Downloaded ${terminalText(meta.title)} (${id}) to ${result.path}, ${formatBytes(result.bytes)}${result.md5Checksum ? `, md5 ${result.md5Checksum} checked` : ''}`,
        );
    } catch (error) {
      if (stop.reason() === 'reader') return;
      if (stop.reason()) {
        if (output.kind !== 'stdout') out.note('Interrupted: the bytes received are kept; run the same command again to go on from there.');
        process.exitCode = stop.exitCode();
        return;
      }
      if ((error as { code?: unknown }).code === 'STORAGE_TRANSFER_GAVE_UP' && output.kind !== 'stdout') {
        throw withHint(error, `the bytes received are kept: run the same gantry storage get again to go on from there`);
      }
      throw error;
    } finally {
      stop.dispose();
    }
  });
}

interface ExportFlags extends StorageFlags {
  mime: string;
  output?: string;
}

export async function exportAction(id: string, flags: ExportFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  const { out, logger } = context;
  checkId(id);
  const mime = checkMediaType(flags.mime);
  if (mime.includes(';')) throw usage(`--mime ${mime}: an export type takes no parameters`, 'e.g. --mime application/pdf');
  if (json && flags.output === '-') throw usage('--json and -o - both want stdout', 'write the export to a file (-o <file>) to get the JSON summary');
  const output = await checkOutput(flags.output);
  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME, isServiceDocument } = await import('../../../storage/index.js');
    const meta = await client.files.get({ fileId: id, fields: 'id,title,mimeType' });
    // Said before the local target is looked at: that x.txt exists is beside the point when nothing can be exported.
    if (!isServiceDocument(meta.mimeType) || meta.mimeType === FOLDER_MIME) {
      throw new CheckFailedError(
        `${meta.title ?? id} (${id}) is ${meta.mimeType === FOLDER_MIME ? 'a folder' : `a file of its own type (${meta.mimeType ?? 'none given'})`}, not a storage document: only documents can be exported`,
        {
          code: 'STORAGE_NOT_EXPORTABLE',
          hint: meta.mimeType === FOLDER_MIME ? `list it with: gantry storage ls ${id}` : `download it as it is with: gantry storage get ${id}`,
        },
      );
    }
    const stop = interruption({ reader: output.kind === 'stdout' });
    const label = meta.title ?? id;
    try {
      if (output.kind === 'stdout') {
        await contentToStdout(
          client,
          { url: `storage/v2/files/${encodeURIComponent(id)}/export`, searchParams: { mimeType: mime }, resumable: false, label },
          stop,
          logger,
          transferProgress(out, `export ${label}`, undefined),
        );
        return;
      }
      const extension = EXPORT_EXTENSIONS[mime] ?? '';
      const base = localNameFor(meta.title, id);
      const path = await targetIn(output, extension && !base.toLowerCase().endsWith(extension) ? `${base}${extension}` : base);
      const { exportFile } = await import('../../../storage/index.js');
      const progress = transferProgress(out, `export ${label}`, undefined);
      let result;
      try {
        result = await exportFile(client.transport, id, mime, {
          path,
          onProgress: ({ received, total }) => progress.update(received, total),
          signal: stop.signal,
        });
      } finally {
        progress.done();
      }
      if (json) out.json({ id, title: meta.title, path: result.path, bytes: result.bytes, mimeType: result.mimeType });
      else out.line(`Exported ${terminalText(meta.title)} (${id}) as ${mime} to ${result.path}, ${formatBytes(result.bytes)}`);
    } catch (error) {
      if (stop.reason()) {
        process.exitCode = stop.exitCode();
        return;
      }
      throw error;
    } finally {
      stop.dispose();
    }
  });
}

interface StdoutContent {
  url: string;
  searchParams: Record<string, string>;
  /** A download can go on with Range after a break; an export is made anew each time, so it cannot. */
  resumable: boolean;
  md5?: string | undefined;
  total?: number | undefined;
  label: string;
}

/**
 * Waits for stdout to take more; false when it failed instead (a full disk): the command's guard in main.ts says so
 * once, with its exit code, so the download just stops. An interruption rejects as before.
 */
async function drained(stdout: NodeJS.WriteStream, signal: AbortSignal): Promise<boolean> {
  try {
    await once(stdout, 'drain', { signal });
    return true;
  } catch (error) {
    if (signal.aborted) throw error;
    return false;
  }
}

/**
 * Streams content to stdout as it arrives, waiting while stdout is full. After a break a download asks for the rest
 * with Range (bytes already written cannot be taken back, so a 200 instead of a 206 is an error), and its md5 is
 * checked at the end; a reader that goes away stops it quietly.
 */
async function contentToStdout(
  client: StorageClient,
  content: StdoutContent,
  stop: Interruption,
  logger: Logger,
  progress: ReturnType<typeof transferProgress>,
): Promise<number> {
  const [{ NetworkError, ProtocolError }, { toStorageError, StorageError }] = await Promise.all([
    import('../../../http/index.js'),
    import('../../../storage/index.js'),
  ]);
  const hash = content.md5 ? createHash('md5') : undefined;
  const stdout = process.stdout;
  let offset = 0;
  let failures = 0;
  const transient = (error: unknown) =>
    error instanceof NetworkError ||
    error instanceof ProtocolError ||
    (error instanceof StorageError && (error.status >= 500 || error.status === 408 || error.status === 429));
  try {
    for (;;) {
      try {
        const opened = await client.transport.http.stream({
          url: content.url,
          searchParams: content.searchParams,
          headers: { authorization: await client.transport.authorization(), accept: '*/*', ...(offset > 0 ? { range: `bytes=${offset}-` } : {}) },
          accept: [200, 206],
          signal: stop.signal,
        });
        if (offset > 0 && opened.status !== 206) {
          opened.body.destroy();
          throw new GantryError(
            `the service would not send the rest of ${content.label} from byte ${offset} (it answered ${opened.status}); the bytes already written cannot be taken back`,
            { exitCode: ExitCode.remote, code: 'STORAGE_TRANSFER_GAVE_UP', hint: 'download it to a file (-o <file>), which can go on from where it stopped' },
          );
        }
        for await (const chunk of opened.body as AsyncIterable<Buffer>) {
          hash?.update(chunk);
          offset += chunk.length;
          if (!stdout.write(chunk) && !(await drained(stdout, stop.signal))) return offset;
          progress.update(offset, content.total);
          if (stop.signal.aborted) throw stop.signal.reason;
        }
        if (content.total !== undefined && offset < content.total)
          throw new ProtocolError(`the body of ${content.label} ended at byte ${offset} of ${content.total}`);
        break;
      } catch (error) {
        if (stop.signal.aborted) throw stop.signal.reason;
        const failure = toStorageError(error);
        if (failure instanceof GantryError && failure.code === 'STORAGE_TRANSFER_GAVE_UP') throw failure;
        if (!content.resumable || !transient(failure)) throw failure;
        failures += 1;
        if (failures >= 5)
          throw new GantryError(`the download of ${content.label} to stdout gave up after ${failures} failed attempts in a row at byte ${offset}`, {
            exitCode: ExitCode.remote,
            code: 'STORAGE_TRANSFER_GAVE_UP',
            cause: failure,
            hint: 'download it to a file (-o <file>), which a rerun goes on with',
          });
        const delay = Math.min(8000, 500 * 2 ** (failures - 1));
        logger.warn(`download of ${content.label}: the transfer broke at byte ${offset}; asking for the rest in ${delay} ms (attempt ${failures + 1} of 5)`);
        await new Promise((done) => setTimeout(done, delay));
      }
    }
  } finally {
    progress.done();
  }
  if (hash && content.md5 && hash.digest('hex') !== content.md5.toLowerCase()) {
    throw new CheckFailedError(`the bytes of ${content.label} written to stdout do not have the service's md5 ${content.md5}`, {
      code: 'STORAGE_MD5_MISMATCH',
      hint: 'download it again; if it fails again, the stored content differs from its md5Checksum',
    });
  }
  return offset;
}
