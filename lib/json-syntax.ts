/**
 * Where a JSON text stops being JSON, and what was expected there, without a byte of the text itself. JSON.parse's
 * own messages quote the text (`Unexpected token 's', "s3cr3t\n" is not valid JSON`), which must never reach an
 * error message when the text is secret material (a value file, stdin, a data file of secrets). A root module of lib/
 * so that the secrets client and the independent dev servers can both use it; it reads no specification.
 */

export interface JsonSyntaxProblem {
  /** Offset in UTF-16 code units from the start of the text. */
  offset: number;
  /** 1-based line and column (columns in characters). */
  line: number;
  column: number;
  /** What the grammar allowed there, e.g. `',' or '}'`. */
  expected: string;
  /** The kind of character found, never the character: `a letter`, `a digit`, `the end of the input` … */
  found: string;
}

const whitespace = new Set([' ', '\t', '\n', '\r']);

/** The kind of a character, told without showing it. Structural characters are only named when they are JSON's own. */
function kindOf(char: string | undefined): string {
  if (char === undefined) return 'the end of the input';
  if (/[A-Za-z]/.test(char)) return 'a letter';
  if (/[0-9]/.test(char)) return 'a digit';
  if (char === '\uFEFF') return 'a byte order mark';
  if (char === '\n' || char === '\r') return 'a line break';
  if (char === '\t') return 'a tab';
  if (char === ' ') return 'a space';
  if (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f) return 'a control character';
  if (char.charCodeAt(0) > 0x7f) return 'a non-ASCII character';
  return 'a punctuation character';
}

/** The first syntax error of `text` as JSON (RFC 8259), or undefined when it is valid. Iterative: any depth. */
export function findJsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  const stack: Array<'{' | '['> = [];
  let i = 0;
  const problem = (expected: string, at = i): JsonSyntaxProblem => ({ offset: at, ...position(text, at), expected, found: kindOf(text[at]) });
  const skip = () => {
    while (i < text.length && whitespace.has(text[i]!)) i++;
  };
  const digits = () => {
    const start = i;
    while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
    return i > start;
  };
  /** A string starting at the quote under `i`; leaves `i` after the closing quote. */
  const string = (): JsonSyntaxProblem | undefined => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) return problem(`the closing '"' of the string that starts at ${where(text, start)}`);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return problem('an escaped control character (\\n, \\t, \\u0000 …) inside a string: raw ones are not allowed');
      if (c === 0x5c) {
        const next = text[i + 1];
        if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else if (next === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) return problem('four hex digits after \\u', i + 2);
          i += 6;
        } else return problem('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX', i + 1);
        continue;
      }
      i++;
    }
  };
  const number = (): JsonSyntaxProblem | undefined => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (!digits()) return problem('a digit');
    if (text[i] === '.') {
      i++;
      if (!digits()) return problem('a digit after the decimal point');
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!digits()) return problem('a digit in the exponent');
    }
    return undefined;
  };
  type State = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'after';
  let state: State = 'value';
  for (;;) {
    skip();
    const c = text[i];
    switch (state) {
      // Just inside a container: its close, or its first key (object) or value (array).
      case 'value-or-close':
      case 'key-or-close': {
        const inObject: boolean = state === 'key-or-close';
        if (c === (inObject ? '}' : ']')) {
          stack.pop();
          i++;
          state = 'after';
        } else state = inObject ? 'key' : 'value';
        continue;
      }
      case 'value': {
        if (c === '{' || c === '[') {
          stack.push(c);
          i++;
          state = c === '{' ? 'key-or-close' : 'value-or-close';
          continue;
        }
        let failed: JsonSyntaxProblem | undefined;
        if (c === '"') failed = string();
        else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) failed = number();
        else {
          const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, i));
          if (!literal) return problem('a JSON value: an object {…}, an array […], a string in double quotes, a number, true, false or null');
          i += literal.length;
        }
        if (failed) return failed;
        state = 'after';
        continue;
      }
      case 'key': {
        if (c !== '"') return problem('a key in double quotes');
        const failed = string();
        if (failed) return failed;
        state = 'colon';
        continue;
      }
      case 'colon':
        if (c !== ':') return problem("':' after the key");
        i++;
        state = 'value';
        continue;
      case 'after': {
        const top = stack[stack.length - 1];
        if (top === undefined) return c === undefined ? undefined : problem('nothing after the JSON value');
        if (c === ',') {
          i++;
          state = top === '{' ? 'key' : 'value';
          continue;
        }
        if (c === (top === '{' ? '}' : ']')) {
          stack.pop();
          i++;
          continue;
        }
        return problem(top === '{' ? "',' or '}' after a value in an object" : "',' or ']' after a value in an array");
      }
    }
  }
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function where(text: string, offset: number): string {
  const { line, column } = position(text, offset);
  return `line ${line}, column ${column}`;
}

/**
 * Why `text` is not JSON, in words that never quote it: `line 1, column 1: expected a JSON value …, found a letter`.
 * For a text JSON.parse refused but the scanner accepts (nesting deeper than the parser's stack), says so.
 */
export function describeJsonSyntaxProblem(text: string): string {
  const found = findJsonSyntaxProblem(text);
  if (!found) return 'it is nested too deeply to parse';
  return `line ${found.line}, column ${found.column}: expected ${found.expected}, found ${found.found}`;
}

/** JSON.parse that never puts the text in its error: the message says where and what was expected. */
export function parseJsonQuietly(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: describeJsonSyntaxProblem(text) };
  }
}

export interface JsonDuplicateKey {
  /** The key as JSON.parse reads it (escapes decoded). */
  key: string;
  /** Where the second occurrence starts: offset, 1-based line and column. */
  offset: number;
  line: number;
  column: number;
  /** The 1-based line of the first occurrence in the same object. */
  firstLine: number;
}

/**
 * A JSON file a person edits (a manifest, a lock file, the hooks file): parsed, and refused when it does not parse or
 * when an object gives a key twice (JSON.parse would keep the last silently). Each refusal is the caller's own error.
 */
export function parseEditedJson(text: string, refuse: { invalid(error: Error): Error; duplicate(found: JsonDuplicateKey): Error }): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuse.invalid(error as Error);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate) throw refuse.duplicate(duplicate);
  return value;
}

/**
 * The first key that appears twice in one object of a valid JSON text, or undefined. JSON.parse keeps the last value
 * silently (`{"x": 1, "x": 2}` is `{x: 2}`), so a file a person edits (a manifest, a lock) is scanned for them. The
 * text must already parse; the scan is iterative, for any depth.
 */
export function findDuplicateKey(text: string): JsonDuplicateKey | undefined {
  // One entry per open container: the keys seen so far (objects) or null (arrays).
  const stack: Array<Map<string, number> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      stack.push(new Map());
      expectKey = true;
    } else if (c === '[') {
      stack.push(null);
      expectKey = false;
    } else if (c === '}' || c === ']') {
      stack.pop();
      expectKey = false;
    } else if (c === ',') {
      expectKey = stack[stack.length - 1] instanceof Map;
    } else if (c === ':') {
      expectKey = false;
    } else if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (!expectKey) continue;
      const keys = stack[stack.length - 1];
      let key: string;
      try {
        key = JSON.parse(text.slice(start, i + 1)) as string;
      } catch {
        return undefined; // not valid JSON: the syntax check reports it
      }
      const first = keys?.get(key);
      if (first !== undefined) return { key, offset: start, ...position(text, start), firstLine: position(text, first).line };
      keys?.set(key, start);
      expectKey = false;
    }
  }
  return undefined;
}
