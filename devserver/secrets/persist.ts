/**
 * Persistence of the server's state to one JSON file. Each save writes a temporary file next to the target, fsyncs it,
 * renames it over the target and fsyncs the folder, so a crash (even kill -9) leaves either the old file or the new
 * one, never a half-written one. Saves are serialised and coalesced: callers that ask while a save is running all wait
 * for the next one, which carries every change made before it started.
 */
import { readdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { temporaryWriter, writeFileAtomic } from '../../lib/atomic-write.js';
import { UsageError } from '../../lib/errors.js';
import { describeJsonSyntaxProblem } from '../../lib/json-syntax.js';
import { checkWritableFile, ensureFolder, localFileLimits, readLocalText } from '../../lib/local-paths.js';

/** Said with every refusal of the data file: what the server takes there. */
export const dataFileHint = 'give a file this dev server wrote (format gantry-secrets-devserver), or a path that does not exist yet to start empty';

export class AtomicJsonFile {
  private running: Promise<void> | undefined;
  private pending: Promise<void> | undefined;
  /** the text last known to be on disk, to roll the memory back to when a save fails */
  private lastText: string | undefined;

  constructor(
    readonly path: string,
    private readonly snapshot: () => unknown,
    /** How messages name the file: "the data file (--data-file)". */
    readonly what = 'the data file',
  ) {}

  /**
   * Reads the file, after checking that it can be written where it is: its folder is made one level at a time (no
   * recursive mkdir loop on /proc/nope) and a writable folder, and the file, if present, is a regular one of at most
   * 64 MiB (never /dev/full or a FIFO read without end). Every refusal is a usage error naming the file.
   */
  async load(): Promise<unknown | undefined> {
    await ensureFolder(dirname(this.path), `the folder of ${this.what}`);
    await checkWritableFile(this.path, this.what);
    await this.removeStaleTemporaries();
    const text = await readLocalText(this.path, { what: this.what, missingOk: true, maxBytes: localFileLimits.data, hint: dataFileHint });
    if (text === undefined) return undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      this.lastText = text;
      return parsed;
    } catch {
      // JSON.parse's message quotes the text, and this file holds secrets: where it breaks, never what is there.
      throw new UsageError(`${this.what} ${this.path} is not valid JSON (${describeJsonSyntaxProblem(text)}); it was left as it is`, {
        code: 'DATA_FILE_INVALID',
        hint: dataFileHint,
      });
    }
  }

  /** The state as it is on disk (a fresh copy), or undefined when nothing was written or read yet. */
  lastGood(): unknown | undefined {
    return this.lastText === undefined ? undefined : JSON.parse(this.lastText);
  }

  /** Temporary files left by a process that died mid-save (its pid is gone) are removed; the target is untouched. */
  private async removeStaleTemporaries() {
    const folder = dirname(this.path);
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      return;
    }
    for (const name of names) {
      const writer = temporaryWriter(this.path, name);
      if (writer === undefined || writer === process.pid || isAlive(writer)) continue;
      await unlink(join(folder, name)).catch(() => undefined);
    }
  }

  /** Resolves once a save that started after this call has reached the disk. */
  save(): Promise<void> {
    if (this.pending) return this.pending;
    if (!this.running) {
      this.running = this.write().finally(() => (this.running = undefined));
      return this.running;
    }
    const after = this.running.catch(() => undefined);
    this.pending = after.then(() => {
      this.pending = undefined;
      this.running = this.write().finally(() => (this.running = undefined));
      return this.running;
    });
    return this.pending;
  }

  private async write(): Promise<void> {
    const text = JSON.stringify(this.snapshot());
    const folder = dirname(this.path);
    await ensureFolder(folder, `the folder of ${this.what}`); // one level at a time: never a mkdir loop
    await writeFileAtomic(this.path, text, { mode: 0o600, sync: true });
    this.lastText = text;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
