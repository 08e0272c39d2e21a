import { redact } from '../redact.js';
import { terminalText } from '../terminal-text.js';

export interface Column<Row> {
  header: string;
  value: (row: Row) => string | number | boolean | null | undefined;
  align?: 'left' | 'right';
}

/**
 * Everything but `json` and `raw` shows text as `terminalText` escapes it, since much of it came from a server: a line
 * or a note keeps its own line breaks (several lines given on purpose) and escapes every other control character; a
 * table cell and a progress label escape line breaks too, so a row stays one line. `json` escapes what JSON.stringify
 * leaves raw (DEL, C1, bidi controls) as `\uXXXX`, the same document; `raw` is byte-exact, for pipes.
 */
export interface Output {
  /** Human output, one line per call, on stdout. */
  line(text?: string): void;
  /** A machine-readable document on stdout (--json). */
  json(value: unknown): void;
  table<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): void;
  /** A progress bar on stderr; a no-op unless stderr is a terminal. */
  progress(label: string, total?: number): Progress;
  /** A log line on stderr (redacted). */
  note(text: string): void;
  /**
   * A raw value for a pipe: exactly `text` on stdout, with a newline only when stdout is a terminal (as `vault kv get
   * -field` prints it), so `$(…)` and `| base64 -d` see the value's own bytes.
   */
  raw?(text: string): void;
}

export interface Progress {
  update(done: number, total?: number, detail?: string): void;
  done(detail?: string): void;
}

export interface OutputStreams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** A table cell as it is shown: `-` for nothing, one line, nothing a terminal would act on. */
export function tableCell(value: string | number | boolean | null | undefined): string {
  return value === null || value === undefined ? '-' : terminalText(String(value));
}

export function formatTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  const cells = rows.map((row) => columns.map((column) => tableCell(column.value(row))));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((row) => row[i]!.length)));
  const render = (values: string[]) =>
    values
      .map((value, i) => (columns[i]!.align === 'right' ? value.padStart(widths[i]!) : value.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [render(columns.map((c) => c.header.toUpperCase())), ...cells.map(render)].join('\n');
}

const noProgress: Progress = { update() {}, done() {} };

export function createOutput(streams: OutputStreams = { stdout: process.stdout, stderr: process.stderr }): Output {
  return {
    line(text = '') {
      streams.stdout.write(`${terminalText(text, { lineBreaks: 'keep' })}\n`);
    },
    json(value) {
      streams.stdout.write(`${terminalText(JSON.stringify(value, null, 2), { lineBreaks: 'keep' })}\n`);
    },
    table(rows, columns) {
      streams.stdout.write(`${formatTable(rows, columns)}\n`);
    },
    note(text) {
      streams.stderr.write(`${terminalText(redact(text), { lineBreaks: 'keep' })}\n`);
    },
    raw(text) {
      streams.stdout.write(streams.stdout.isTTY ? `${text}\n` : text);
    },
    progress(given, initialTotal) {
      if (!streams.stderr.isTTY) return noProgress;
      const label = terminalText(given);
      let total = initialTotal;
      let last = 0;
      const draw = (done: number, detail = '') => {
        const width = 24;
        const ratio = total ? Math.min(1, done / total) : 0;
        const bar = total ? `[${'#'.repeat(Math.round(ratio * width)).padEnd(width, '.')}] ${Math.round(ratio * 100)}%` : `${done}`;
        const text = `${label} ${bar} ${terminalText(detail)}`.slice(0, (streams.stderr.columns || 80) - 1);
        streams.stderr.write(`\r\x1b[2K${text}`);
      };
      return {
        update(done, newTotal, detail) {
          if (newTotal !== undefined) total = newTotal;
          const now = Date.now();
          if (now - last < 80 && done !== total) return;
          last = now;
          draw(done, detail);
        },
        done(detail) {
          streams.stderr.write(`\r\x1b[2K${detail ? `${label} ${terminalText(detail)}\n` : ''}`);
        },
      };
    },
  };
}

/** Masks a secret value for tables: shows its length, never its content. */
export function mask(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const length = text?.length ?? 0;
  return `<hidden, ${length} char${length === 1 ? '' : 's'}>`;
}
