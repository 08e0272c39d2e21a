// What every `gantry storage` action shares once it runs: the client opened and closed around it, Ctrl-C and a
// reader that went away turned into an abort, tables printed as rows arrive, progress with bytes and rate, and the
// library's hints said in the command's terms. Loaded with the first action (it imports lib/storage's types only).
import { ExitCode, GantryError } from '../../../errors.js';
import { tableCell, type Column, type Output } from '../../output.js';
import type { CliContext } from '../../context.js';
import { onStdoutReaderGone } from '../../reader-gone.js';
import { openStorage, type StorageFlags, type StorageSession } from './client.js';
import { formatBytes } from './input.js';
import type { CliErrorCode } from '../../error-codes.js';

/** Runs `use` with an open client, closing it (and the login) however it ends. */
export async function withStorage<T>(flags: StorageFlags, context: CliContext, use: (session: StorageSession) => Promise<T>): Promise<T> {
  const session = await openStorage(flags, context.logger);
  try {
    return await use(session);
  } catch (error) {
    throw forTheCommand(error, session);
  } finally {
    session.close();
  }
}

/**
 * The service's answers said in the command's terms. A 403 for missing scopes (Google answers insufficientPermissions
 * with "insufficient authentication scopes", the same reason as a missing role) is about the login, not the file; a
 * 401 is about the token where it came from; a 404 without the service's error body is no storage API at all.
 */
export function forTheCommand(error: unknown, session: Pick<StorageSession, 'tokenFrom' | 'baseFrom'> & { client?: { baseUrl: string } }): unknown {
  const { tokenFrom } = session;
  const e = error as { status?: unknown; reason?: unknown; storageMessage?: unknown; errors?: unknown };
  if (!(error instanceof GantryError) || typeof e.status !== 'number') return error;
  if (
    e.status === 403 &&
    (e.reason === 'insufficientScopes' || (e.reason === 'insufficientPermissions' && typeof e.storageMessage === 'string' && /scope/i.test(e.storageMessage)))
  ) {
    return withHint(
      error,
      tokenFrom === 'STORAGE_TOKEN'
        ? 'STORAGE_TOKEN lacks a storage scope: use a token granted storage.file (or storage), or unset it and log in with `gantry auth login --scope storage.file`'
        : `${tokenFrom} lacks a storage scope: log in again with \`gantry auth login --scope storage.file\` (and the same --profile)`,
    );
  }
  if (e.status === 401) {
    return withHint(
      error,
      tokenFrom === 'STORAGE_TOKEN'
        ? 'STORAGE_TOKEN is wrong, expired or revoked: set a valid one (or unset it to use the gantry auth login)'
        : `the token of ${tokenFrom} was refused: run \`gantry auth refresh\`, or \`gantry auth login --scope storage.file\` (with the same --profile)`,
    );
  }
  // A StorageError always has `errors`; empty, with no reason and no message, the body was not the service's shape.
  const notStorageShaped = Array.isArray(e.errors) && e.errors.length === 0 && e.reason === undefined && e.storageMessage === undefined;
  if (e.status === 404 && notStorageShaped) {
    const where = session.client?.baseUrl ?? session.baseFrom;
    return withHint(
      error,
      `${where} does not look like a storage API (its 404 is not the service's error): check ${session.baseFrom} — the service root, e.g. what \`gantry dev\` prints`,
    );
  }
  return error;
}

/** Gives an error the hint the command should show (the library's speaks of functions and options). */
export function withHint(error: unknown, hint: string): unknown {
  if (error instanceof GantryError) Object.defineProperty(error, 'hint', { value: hint, enumerable: true });
  return error;
}

export interface Interruption {
  signal: AbortSignal;
  /** Why it stopped: Ctrl-C, SIGTERM, or stdout's reader gone; undefined while it runs. */
  reason(): 'SIGINT' | 'SIGTERM' | 'reader' | undefined;
  /** 130 after Ctrl-C, 143 after SIGTERM, 0 when the reader went away (it took what it wanted). */
  exitCode(): number;
  dispose(): void;
}

/**
 * Ctrl-C and SIGTERM abort what runs (a second one ends the process at once); with `reader`, so does stdout's reader
 * going away (`| head -1`), for commands whose output is the point.
 */
export function interruption(options: { reader?: boolean } = {}): Interruption {
  const controller = new AbortController();
  let why: 'SIGINT' | 'SIGTERM' | 'reader' | undefined;
  const stop = (reason: 'SIGINT' | 'SIGTERM' | 'reader') => {
    if (why !== undefined && reason !== 'reader') process.exit(reason === 'SIGINT' ? 130 : 143);
    why ??= reason;
    controller.abort(
      new GantryError(reason === 'reader' ? 'the reader of the output went away' : `interrupted (${reason})`, {
        exitCode: ExitCode.remote,
        code: 'INTERRUPTED' satisfies CliErrorCode,
      }),
    );
  };
  const onInt = () => stop('SIGINT');
  const onTerm = () => stop('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const unregister = options.reader ? onStdoutReaderGone(() => stop('reader')) : () => undefined;
  return {
    signal: controller.signal,
    reason: () => why,
    exitCode: () => (why === 'SIGINT' ? 130 : why === 'SIGTERM' ? 143 : 0),
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      unregister();
    },
  };
}

/** One JSON document on one line (JSON lines, for listings and streams). */
export function jsonLine(out: Output, value: unknown): void {
  out.line(JSON.stringify(value));
}

/**
 * A table printed as its rows arrive (a listing of many pages, a stream of changes): the header once, columns as wide
 * as the widest cell seen so far (never narrower), so `| head` gets rows at once and a long listing is never held.
 */
export class StreamTable<Row> {
  private widths: number[];
  private headed = false;
  private count = 0;

  constructor(
    private readonly out: Output,
    private readonly columns: readonly Column<Row>[],
  ) {
    this.widths = columns.map((c) => c.header.length);
  }

  get rows(): number {
    return this.count;
  }

  write(rows: readonly Row[]): void {
    if (rows.length === 0) return;
    const cells = rows.map((row) =>
      this.columns.map((column) => {
        const value = column.value(row);
        return tableCell(value === '' ? undefined : value);
      }),
    );
    for (const row of cells) row.forEach((cell, i) => (this.widths[i] = Math.max(this.widths[i]!, cell.length)));
    const render = (values: string[]) =>
      values
        .map((value, i) => (this.columns[i]!.align === 'right' ? value.padStart(this.widths[i]!) : value.padEnd(this.widths[i]!)))
        .join('  ')
        .trimEnd();
    if (!this.headed) {
      this.out.line(render(this.columns.map((c) => c.header.toUpperCase())));
      this.headed = true;
    }
    for (const row of cells) this.out.line(render(row));
    this.count += rows.length;
  }
}

/** A progress bar with bytes and rate (on a terminal only; elsewhere nothing). */
export function transferProgress(
  out: Output,
  label: string,
  total: number | undefined,
): { update(done: number, total?: number): void; done(detail?: string): void } {
  const bar = out.progress(label, total);
  let samples: Array<[number, number]> = [];
  let known = total;
  return {
    update(done, newTotal) {
      if (newTotal !== undefined) known = newTotal;
      const now = Date.now();
      if (samples.length > 0 && done < samples[samples.length - 1]![1]) samples = []; // went back (a restarted session)
      samples.push([now, done]);
      while (samples.length > 2 && now - samples[0]![0] > 5000) samples.shift();
      const [t0, b0] = samples[0]!;
      const rate = now > t0 ? ((done - b0) * 1000) / (now - t0) : 0;
      bar.update(done, known, `${formatBytes(done)}${known !== undefined ? ` / ${formatBytes(known)}` : ''}  ${formatBytes(Math.max(0, Math.round(rate)))}/s`);
    },
    done(detail) {
      bar.done(detail);
    },
  };
}

/** `2024-05-01T12:00:00.000Z` → `2024-05-01T12:00:00Z`. */
export function shortDate(value: string | undefined): string | undefined {
  return value?.replace(/\.\d+Z$/, 'Z');
}
