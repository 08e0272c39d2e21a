import { open, stat } from 'node:fs/promises';
import { UsageError } from '../errors.js';

/**
 * Secret values for `gantry secrets put|patch` come from files or stdin so they stay out of shell history and
 * process lists: `key=@file` (the file's text), `key=-` (stdin), `@data.json` (the whole object), `-` (a JSON object
 * on stdin). `key=value` works too, for values that are not secret.
 */
export interface InputSources {
  readStdin(): Promise<string>;
  readFile(path: string): Promise<string>;
}

/** Largest input read from a file or stdin: the service's request size limit. */
export const maxInputBytes = 32 * 1024 * 1024;

export async function readTextFile(path: string, limit = maxInputBytes): Promise<string> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (size > limit) throw new UsageError(`${path} is ${size} bytes, more than the ${limit} a request may carry`);
  const handle = await open(path, 'r');
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

export async function readStdinText(stream: NodeJS.ReadableStream = process.stdin, limit = maxInputBytes): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > limit) throw new UsageError(`stdin is more than the ${limit} bytes a request may carry`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export const defaultSources: InputSources = { readStdin: () => readStdinText(), readFile: (path) => readTextFile(path) };

function parseJsonObject(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // A RangeError here is nesting deeper than the parser's stack: far over the service's depth limit anyway.
    const reason = error instanceof RangeError ? 'it is nested too deeply' : (error as Error).message;
    throw new UsageError(`${where} is not valid JSON: ${reason}`, { hint: 'give a JSON object such as {"password": "..."}' });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${where} must hold a JSON object of keys and values`);
  return value as Record<string, unknown>;
}

/** Parse the data arguments of put/patch into one object. Stdin is read at most once. */
export async function parseDataArguments(args: readonly string[], sources: InputSources = defaultSources): Promise<Record<string, unknown>> {
  if (args.length === 0) throw new UsageError('give the data: key=value pairs, key=@file, key=- (stdin), @data.json, or - (a JSON object on stdin)');
  let stdinUsed = false;
  const stdin = async (what: string) => {
    if (stdinUsed) throw new UsageError(`stdin can be read only once (${what})`);
    stdinUsed = true;
    return sources.readStdin();
  };
  const data: Record<string, unknown> = {};
  for (const arg of args) {
    if (arg === '-') {
      Object.assign(data, parseJsonObject(await stdin('-'), 'stdin'));
      continue;
    }
    if (arg.startsWith('@')) {
      Object.assign(data, parseJsonObject(await sources.readFile(arg.slice(1)), arg.slice(1)));
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq <= 0) throw new UsageError(`"${arg.split('=')[0]}" is not key=value, key=@file, key=-, @file.json or -`);
    const key = arg.slice(0, eq);
    const raw = arg.slice(eq + 1);
    if (raw === '-') data[key] = stripOneNewline(await stdin(`${key}=-`));
    else if (raw.startsWith('@')) data[key] = stripOneNewline(await sources.readFile(raw.slice(1)));
    else data[key] = raw;
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
  const parts = text.split(',').map((s) => s.trim()).filter(Boolean);
  const versions = parts.map(Number);
  if (parts.length === 0 || versions.some((v) => !Number.isInteger(v) || v < 1)) {
    throw new UsageError(`--versions must be a comma-separated list of version numbers, got "${text}"`);
  }
  return versions;
}

export function parseWholeNumber(text: string | undefined, flag: string, min = 0): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number of at least ${min}, got "${text}"`);
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
