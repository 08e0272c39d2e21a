/**
 * The credentials blocks of Terraform's CLI configuration, read as Terraform reads them (internal/command/cliconfig):
 *
 * - the main file: `TF_CLI_CONFIG_FILE`, else `TERRAFORM_CONFIG`, else `~/.terraformrc`; HCL 1, or JSON (Terraform's
 *   HCL 1 parser takes both, whatever the file's name);
 * - unless one of those variables is set, every `*.tfrc` and `*.tfrc.json` file of `~/.terraform.d/` in name order
 *   (`credentials.tfrc.json`, which `terraform login` writes, among them); a later file's block for a host replaces an
 *   earlier one's, and the folder's replace the main file's.
 *
 * Only what credentials need is parsed, but the whole file is tokenised, so a malformed file is a UsageError naming the
 * file and line. No message ever quotes a string of the file: a token must not reach an error.
 */
import { expectOptions, expectString } from '../arguments.js';
import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { readLocalTextSync } from '../local-paths.js';
import { registerSecret } from '../http/index.js';
import { normaliseHost } from './address.js';
import type { RegistryErrorCode } from './errors.js';

export class CliConfigError extends UsageError {
  constructor(file: string, line: number | undefined, message: string) {
    super(`${file}${line === undefined ? '' : `:${line}`}: ${message}`, {
      code: 'TERRAFORM_CLI_CONFIG_INVALID' satisfies RegistryErrorCode,
      hint: 'fix the file (Terraform reads the same file and would refuse it too), or point TF_CLI_CONFIG_FILE at another one',
    });
  }
}

type Token =
  | { kind: 'string'; value: string; line: number }
  | { kind: 'word'; value: string; line: number }
  | { kind: 'punct'; value: string; line: number }
  | { kind: 'end'; line: number };

type Value = { kind: 'string'; value: string; line: number } | { kind: 'object'; items: Item[]; line: number } | { kind: 'other'; line: number };

interface Item {
  key: string;
  labels: string[];
  value: Value;
  line: number;
}

/** Describes a token for a message without quoting any string (a string may be a token). */
function describe(token: Token): string {
  if (token.kind === 'end') return 'the end of the file';
  if (token.kind === 'string') return 'a string';
  if (token.kind === 'word') return 'a bare word';
  return `"${token.value}"`;
}

function tokenise(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  const fail = (message: string): never => {
    throw new CliConfigError(file, line, message);
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '\n') {
      line += 1;
      i += 1;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF') {
      i += 1;
    } else if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const start = line;
      const end = text.indexOf('*/', i + 2);
      if (end === -1) throw new CliConfigError(file, start, 'a /* comment is never closed');
      for (let j = i; j < end; j += 1) if (text[j] === '\n') line += 1;
      i = end + 2;
    } else if (c === '"') {
      const start = line;
      let value = '';
      i += 1;
      for (;;) {
        if (i >= text.length || text[i] === '\n') throw new CliConfigError(file, start, 'a string is never closed (a missing ")');
        const ch = text[i] as string;
        if (ch === '"') break;
        if (ch === '\\') {
          const next = text[i + 1];
          const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f' };
          if (next !== undefined && next in simple) {
            value += simple[next];
            i += 2;
          } else if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            value += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
            i += 6;
          } else {
            fail('a string has an invalid escape sequence');
          }
        } else {
          value += ch;
          i += 1;
        }
      }
      i += 1;
      tokens.push({ kind: 'string', value, line: start });
    } else if (c === '<' && text[i + 1] === '<') {
      // A heredoc: <<NAME or <<-NAME … NAME on a line of its own.
      const start = line;
      const header = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)\r?\n/.exec(text.slice(i));
      if (!header) fail('a heredoc ("<<") needs a name and a line break');
      const name = (header as RegExpExecArray)[1] as string;
      i += (header as RegExpExecArray)[0].length;
      line += 1;
      let value = '';
      for (;;) {
        if (i >= text.length) throw new CliConfigError(file, start, `a heredoc is never closed (no line "${name}")`);
        const endOfLine = text.indexOf('\n', i);
        const current = endOfLine === -1 ? text.slice(i) : text.slice(i, endOfLine);
        i = endOfLine === -1 ? text.length : endOfLine + 1;
        if (current.trim() === name) break;
        value += `${current}\n`;
        line += 1;
      }
      line += 1;
      tokens.push({ kind: 'string', value, line: start });
    } else if ('{}[]=,:'.includes(c)) {
      tokens.push({ kind: 'punct', value: c, line });
      i += 1;
    } else if (/[A-Za-z0-9_.+-]/.test(c)) {
      let j = i;
      while (j < text.length && /[A-Za-z0-9_.+:-]/.test(text[j] as string)) {
        // A ":" belongs to a word only inside it (a host:port key); JSON's "key": separator is its own token.
        if (text[j] === ':' && !/[A-Za-z0-9]/.test(text[j + 1] ?? '')) break;
        j += 1;
      }
      tokens.push({ kind: 'word', value: text.slice(i, j), line });
      i = j;
    } else {
      fail(`unexpected character "${c === '\0' ? '\\0' : c}"`);
    }
  }
  tokens.push({ kind: 'end', line });
  return tokens;
}

class Parser {
  private position = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly file: string,
  ) {}

  private peek(): Token {
    return this.tokens[this.position] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== 'end') this.position += 1;
    return token;
  }

  private fail(token: Token, message: string): never {
    throw new CliConfigError(this.file, token.line, message);
  }

  private isPunct(token: Token, value: string): boolean {
    return token.kind === 'punct' && token.value === value;
  }

  /** The whole file: a JSON object, or an HCL body. */
  document(): Item[] {
    const first = this.peek();
    if (this.isPunct(first, '{')) {
      this.next();
      const items = this.body('}');
      this.next();
      const end = this.next();
      if (end.kind !== 'end') this.fail(end, `unexpected ${describe(end)} after the closing "}"`);
      return items;
    }
    return this.body(undefined);
  }

  /** Items up to `close` (not consumed) or the end of the file. */
  private body(close: '}' | undefined): Item[] {
    const items: Item[] = [];
    for (;;) {
      const token = this.peek();
      if (close !== undefined && this.isPunct(token, close)) return items;
      if (token.kind === 'end') {
        if (close !== undefined) this.fail(token, `a block opened with "{" is never closed`);
        return items;
      }
      if (this.isPunct(token, ',')) {
        this.next();
        continue;
      }
      items.push(this.item());
    }
  }

  private item(): Item {
    const keyToken = this.next();
    if (keyToken.kind !== 'word' && keyToken.kind !== 'string') this.fail(keyToken, `expected a name, found ${describe(keyToken)}`);
    const key = keyToken.value;
    const labels: string[] = [];
    for (;;) {
      const token = this.peek();
      if (this.isPunct(token, '=') || this.isPunct(token, ':')) {
        this.next();
        return { key, labels, value: this.value(), line: keyToken.line };
      }
      if (this.isPunct(token, '{')) return { key, labels, value: this.value(), line: keyToken.line };
      if (token.kind === 'string' || token.kind === 'word') {
        labels.push(token.value);
        this.next();
        continue;
      }
      this.fail(token, `expected "=" or "{" after ${keyToken.kind === 'word' ? `"${key.slice(0, 40)}"` : 'a name'}, found ${describe(token)}`);
    }
  }

  private value(): Value {
    const token = this.next();
    if (token.kind === 'string') return token;
    if (token.kind === 'word') return { kind: 'other', line: token.line };
    if (this.isPunct(token, '{')) {
      const items = this.body('}');
      this.next();
      return { kind: 'object', items, line: token.line };
    }
    if (this.isPunct(token, '[')) {
      for (;;) {
        const inner = this.peek();
        if (this.isPunct(inner, ']')) {
          this.next();
          return { kind: 'other', line: token.line };
        }
        if (this.isPunct(inner, ',')) {
          this.next();
          continue;
        }
        if (inner.kind === 'end') this.fail(inner, 'a list opened with "[" is never closed');
        this.value();
      }
    }
    return this.fail(token, `expected a value, found ${describe(token)}`);
  }
}

/** Credentials per normalised host, from one file's text; a later block for the same host wins. */
export function parseCliConfigCredentials(text: string, file: string): Map<string, string> {
  if (typeof text !== 'string') expectString('parseCliConfigCredentials', 'text', text, 'the text of a CLI configuration file');
  expectString('parseCliConfigCredentials', 'file', file, 'the file name, for messages');
  const items = new Parser(tokenise(text, file), file).document();
  const found = new Map<string, string>();
  const take = (label: string, value: Value, line: number) => {
    let host: string;
    try {
      host = normaliseHost(label);
    } catch (error) {
      throw new CliConfigError(file, line, `the credentials block "${label.slice(0, 100)}" has an invalid hostname: ${(error as Error).message}`);
    }
    if (value.kind !== 'object') throw new CliConfigError(file, line, `the credentials for "${host}" must be a block`);
    const token = value.items.filter((item) => item.key === 'token').pop();
    if (!token || token.labels.length > 0 || token.value.kind !== 'string') {
      throw new CliConfigError(file, token?.line ?? line, `the credentials block "${host}" needs token = "<token>"`);
    }
    registerSecret(token.value.value);
    found.set(host, token.value.value);
  };
  for (const item of items) {
    if (item.key !== 'credentials') continue;
    if (item.labels.length === 1) take(item.labels[0] as string, item.value, item.line);
    else if (item.labels.length === 0 && item.value.kind === 'object') {
      // JSON (`"credentials": {"<host>": {"token": …}}`) and HCL's equivalent `credentials { "<host>" { … } }`.
      for (const entry of item.value.items) {
        if (entry.labels.length > 0) throw new CliConfigError(file, entry.line, 'a credentials entry has more than one host name');
        take(entry.key, entry.value, entry.line);
      }
    } else throw new CliConfigError(file, item.line, 'a credentials block takes exactly one host name: credentials "<host>" { token = "…" }');
  }
  return found;
}

export interface CliConfigLocations {
  /** The main file, and whether it was named by a variable (then the folder is not read, as in Terraform). */
  main: { file: string; explicit: boolean } | undefined;
  /** `~/.terraform.d`, or undefined when TF_CLI_CONFIG_FILE / TERRAFORM_CONFIG is set. */
  dir: string | undefined;
}

/** Where Terraform would look, for this environment. */
export function cliConfigLocations(env: NodeJS.ProcessEnv = process.env): CliConfigLocations {
  expectOptions('cliConfigLocations', env, 'env');
  const override = env.TF_CLI_CONFIG_FILE || env.TERRAFORM_CONFIG;
  if (override) return { main: { file: override, explicit: true }, dir: undefined };
  const home = env.HOME || homedir();
  if (!home) return { main: undefined, dir: undefined };
  return { main: { file: join(home, '.terraformrc'), explicit: false }, dir: join(home, '.terraform.d') };
}

/**
 * A configuration file's text, or undefined when it is missing. A folder, a device (/dev/zero), a FIFO or a file of
 * more than a few MB is refused, naming the variable that gave the path, before anything is read without end.
 */
function readText(file: string, what: string): string | undefined {
  return readLocalTextSync(file, {
    what,
    missingOk: true,
    hint: 'point TF_CLI_CONFIG_FILE at a Terraform CLI configuration file (a regular file), or unset it to read ~/.terraformrc',
  });
}

/**
 * Every credentials block Terraform would see, merged in its order: the main file, then the folder's files by name,
 * a later one replacing an earlier one's block for the same host. `note` hears of a named main file that is missing.
 */
export function readCliConfigCredentials(env: NodeJS.ProcessEnv = process.env, note: (message: string) => void = () => undefined): Map<string, string> {
  expectOptions('readCliConfigCredentials', env, 'env');
  if (typeof note !== 'function') note = () => undefined;
  const { main, dir } = cliConfigLocations(env);
  const merged = new Map<string, string>();
  if (main) {
    const variable = env.TF_CLI_CONFIG_FILE ? 'TF_CLI_CONFIG_FILE' : 'TERRAFORM_CONFIG';
    const text = readText(main.file, main.explicit ? `the Terraform CLI configuration (${variable})` : 'the Terraform CLI configuration');
    if (text === undefined && main.explicit) note(`TF_CLI_CONFIG_FILE names ${main.file}, which does not exist; no credentials are read from it`);
    if (text !== undefined) for (const [host, token] of parseCliConfigCredentials(text, main.file)) merged.set(host, token);
  }
  if (dir) {
    let names: string[] = [];
    try {
      if (statSync(dir).isDirectory())
        names = readdirSync(dir)
          .filter((name) => name.endsWith('.tfrc') || name.endsWith('.tfrc.json'))
          .sort();
    } catch {
      names = [];
    }
    for (const name of names) {
      const file = join(dir, name);
      const text = readText(file, 'the Terraform CLI configuration file');
      if (text !== undefined) for (const [host, token] of parseCliConfigCredentials(text, file)) merged.set(host, token);
    }
  }
  return merged;
}
