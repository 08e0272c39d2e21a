/**
 * Characters a terminal acts on or that hide text: C0 and C1 controls and DEL (ESC starts every escape sequence, BEL
 * ends OSC titles, CR rewrites a line), the line and paragraph separators, and the invisible format characters —
 * bidirectional embeddings, overrides and isolates, zero-width characters, marks, joiners and the byte-order mark —
 * that reorder or hide what is shown. Every other character, printable Unicode included, is shown as it is.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const unsafeButLineFeed = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
export interface TerminalTextOptions {
  lineBreaks?: 'keep' | 'escape';
}

const short: Record<string, string> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };

function escape(char: string): string {
  return short[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Text from anywhere — a server's title, description, message or error body, a payload field — as a terminal may show
 * it: each character a terminal would act on or that hides text becomes its JSON escape (`\n`, `\t`, `\u001b`,
 * `\u202e`), so an escape sequence can neither retitle the window, clear the screen, recolour nor reorder the output,
 * and a table cell or log line stays one line. `lineBreaks: 'keep'` keeps `\n` (free text of several lines on
 * purpose: a help page, an error with a table); everything else is escaped all the same. The result of a JSON
 * document is still that JSON document, since the escapes are JSON's. The one escaping of text for the terminal:
 * tables, lines, notes, progress labels, log lines and error messages all pass through it.
 */
export function terminalText(text: string, options?: TerminalTextOptions): string;
export function terminalText(text: string | undefined, options?: TerminalTextOptions): string | undefined;
export function terminalText(text: string | undefined, options: TerminalTextOptions = {}): string | undefined {
  return text?.replace(options.lineBreaks === 'keep' ? unsafeButLineFeed : unsafe, escape);
}
