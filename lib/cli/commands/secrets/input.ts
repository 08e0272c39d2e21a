import { UsageError } from '../../../errors.js';
import { describeJsonSyntaxProblem } from '../../../json-syntax.js';
import { readLocalFile } from '../../../local-paths.js';

/**
 * Secret values for `gantry secrets put|patch` come from files or stdin so they stay out of shell history and
 * process lists: `key=@file` (the file's text), `key=-` (stdin), `@data.json` (the whole object), `-` (a JSON object
 * on stdin). `key=value` works too, for values that are not secret.
 *
 * Secret material is never quoted in an error: a JSON document that does not parse is reported by line, column and
 * what was expected; an argument that is not `key=value` by its position. Text must be UTF-8: binary bytes would be
 * mangled by a text decoding, so they are refused unless `--base64` asks to store them base64-encoded.
 */
export interface InputSources {
  readStdin(): Promise<Buffer>;
  readFile(path: string): Promise<Buffer>;
}

/** Largest input read from a file or stdin: the service's request size limit. */
export const maxInputBytes = 32 * 1024 * 1024;

const fileProblems: Record<string, string> = {
  ENOENT: 'there is no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  ESPECIAL: 'it is a device or another special file, not a regular file or a pipe',
  EEMPTY: 'the path is empty',
};

function fileError(path: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const problem = fileProblems[code] ?? `it cannot be read (${code || (error as Error).message})`;
  return new UsageError(`cannot read ${path}: ${problem}; nothing was sent`, {
    code: 'SECRETS_INPUT_FILE',
    hint: 'key=@<file> and @<file.json> name a readable file, relative to the current folder; key=- and - read stdin.',
  });
}

/**
 * A file's bytes (a regular file, or a pipe such as `<(…)` or /dev/stdin on a pipe), through the root reader
 * (lib/local-paths.ts): folders and devices (/dev/zero) refused, never more than `limit` read.
 */
export async function readInputFile(path: string, limit = maxInputBytes): Promise<Buffer> {
  try {
    return await readLocalFile(path, { what: path, maxBytes: limit, allowPipe: true });
  } catch (error) {
    const code = ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'EFBIG') throw new UsageError(`${path} is more than the ${limit} bytes a request may carry; nothing was sent`);
    throw fileError(path, (error as Error).cause ?? error);
  }
}

export async function readStdinBytes(stream: NodeJS.ReadableStream = process.stdin, limit = maxInputBytes): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > limit) throw new UsageError(`stdin is more than the ${limit} bytes a request may carry; nothing was sent`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Stdin as UTF-8 text (a token, a secret id), refused when it is not text. */
export async function readStdinText(stream: NodeJS.ReadableStream = process.stdin, limit = maxInputBytes): Promise<string> {
  return decodeText(await readStdinBytes(stream, limit), 'stdin');
}

export const defaultSources: InputSources = { readStdin: () => readStdinBytes(), readFile: (path) => readInputFile(path) };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Where the first byte that is not UTF-8 sits (its offset only, never the bytes around it). */
function firstInvalidByte(bytes: Buffer): number {
  const round = Buffer.from(bytes.toString('utf8'), 'utf8');
  let i = 0;
  while (i < bytes.length && bytes[i] === round[i]) i++;
  return i;
}

/** UTF-8 text, exactly (a byte order mark is kept); binary input is a usage error rather than mangled text. */
export function decodeText(bytes: Buffer, where: string, binaryHint?: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new UsageError(
      `${where} is binary, not UTF-8 text (the byte at offset ${firstInvalidByte(bytes)} is not UTF-8): stored as text it would be mangled, so nothing was sent`,
      {
        code: 'SECRETS_BINARY_VALUE',
        hint: binaryHint ?? 'Give UTF-8 text here.',
      },
    );
  }
}

const base64Hint =
  'Store binary values base64-encoded: gantry secrets put --base64 <path> key=@<file> (or key=-); read one back with gantry secrets get <path> --field key | base64 -d.';
const jsonHint = 'Give a JSON object such as {"key": "<value>", "other": "<value>"}; for one value taken whole from a file, write key=@<file>.';

function parseJsonObject(bytes: Buffer, where: string): Record<string, unknown> {
  // RFC 8259: JSON is UTF-8; a leading byte order mark may be ignored.
  const text = decodeText(bytes, where, `A JSON document must be UTF-8 text. ${base64Hint}`).replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text, which may be a secret: the position and what was expected instead.
    throw new UsageError(`${where} is not valid JSON: ${describeJsonSyntaxProblem(text)} (the content is not shown)`, {
      code: 'SECRETS_BAD_JSON',
      hint: jsonHint,
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(
      `${where} must hold a JSON object of keys and values, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}`,
      { code: 'SECRETS_BAD_JSON', hint: jsonHint },
    );
  }
  return value as Record<string, unknown>;
}

export interface DataOptions {
  /** Store the bytes of `key=@file` and `key=-` values base64-encoded (no newline dropped). */
  base64?: boolean;
}

/** Parse the data arguments of put/patch into one object. Stdin is read at most once. */
export async function parseDataArguments(
  args: readonly string[],
  sources: InputSources = defaultSources,
  options: DataOptions = {},
): Promise<Record<string, unknown>> {
  if (args.length === 0) throw new UsageError('give the data: key=value pairs, key=@file, key=- (stdin), @data.json, or - (a JSON object on stdin)');
  let stdinUsed = false;
  const stdin = async (what: string) => {
    if (stdinUsed) throw new UsageError(`stdin can be read only once (${what})`);
    stdinUsed = true;
    return sources.readStdin();
  };
  const data: Record<string, unknown> = {};
  let fileValues = 0;
  for (const [index, arg] of args.entries()) {
    if (arg === '-') {
      Object.assign(data, parseJsonObject(await stdin('-'), 'stdin'));
      continue;
    }
    if (arg.startsWith('@')) {
      Object.assign(data, parseJsonObject(await sources.readFile(arg.slice(1)), arg.slice(1)));
      continue;
    }
    const eq = arg.indexOf('=');
    // The argument is not shown: without its `=` it may be a value typed where a key=value pair belongs.
    if (eq < 0)
      throw new UsageError(`data argument ${index + 1} is not key=value, key=@file, key=-, @file.json or - (not shown: it may be a secret value)`, {
        code: 'SECRETS_BAD_ARGUMENT',
      });
    if (eq === 0) throw new UsageError(`data argument ${index + 1} has an empty key before its "="`, { code: 'SECRETS_BAD_ARGUMENT' });
    const key = arg.slice(0, eq);
    const raw = arg.slice(eq + 1);
    if (raw === '-' || raw.startsWith('@')) {
      fileValues++;
      const where = raw === '-' ? `stdin (the value of "${key}")` : `${raw.slice(1)} (the value of "${key}")`;
      const bytes = raw === '-' ? await stdin(`${key}=-`) : await sources.readFile(raw.slice(1));
      data[key] = options.base64 ? bytes.toString('base64') : stripOneNewline(decodeText(bytes, where, base64Hint));
    } else {
      // The command line reached us decoded: bytes that were not UTF-8 are U+FFFD already, and cannot be restored.
      if (raw.includes('\uFFFD')) {
        throw new UsageError(
          `the value of "${key}" on the command line holds U+FFFD, the mark of bytes that were not UTF-8: it would be stored mangled, so nothing was sent`,
          { code: 'SECRETS_BINARY_VALUE', hint: base64Hint },
        );
      }
      data[key] = raw;
    }
  }
  if (options.base64 && fileValues === 0) {
    throw new UsageError('--base64 encodes key=@file and key=- values, and none was given', {
      code: 'SECRETS_BAD_ARGUMENT',
      hint: 'e.g. gantry secrets put --base64 secret/app/tls key=@key.der',
    });
  }
  return data;
}

/** `echo secret | gantry secrets put ... key=-` should store "secret", not "secret\n". */
function stripOneNewline(text: string): string {
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** `1,2,3` → [1, 2, 3] with a usage error for anything else. */
export function parseVersions(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',').map((s) => s.trim());
  if (parts.some((part) => !/^\d+$/.test(part) || !Number.isSafeInteger(Number(part)) || Number(part) < 1)) {
    throw new UsageError(`--versions must be a comma-separated list of version numbers (1 or more), e.g. 1,2; got ${shownFlagValue(text)}; nothing was sent`);
  }
  return parts.map(Number);
}

/** A flag's value in a message: short ones quoted, long ones described (a value pasted in the wrong place). */
function shownFlagValue(text: string): string {
  return text.length <= 24 ? `"${text}"` : `a value of ${text.length} characters`;
}

/** Digits only (no signs, exponents, hex or spaces): `--cas 1e3` and `--max-versions 0x10` are typos, not numbers. */
export function parseWholeNumber(text: string | undefined, flag: string, min = 0): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${flag} must be a whole number of at least ${min}, got ${shownFlagValue(text)}; nothing was sent`);
  }
  return n;
}

/** Reads a secret typed at a terminal without echoing it; from a pipe, reads the first line. */
export async function readSecretLine(prompt: string, stdin: NodeJS.ReadStream = process.stdin, stderr: NodeJS.WriteStream = process.stderr): Promise<string> {
  if (!stdin.isTTY) return stripOneNewline((await readStdinText(stdin)).split(/\r?\n/)[0] ?? '');
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003') return finish(new UsageError('cancelled'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    stdin.on('data', onData);
  });
}
