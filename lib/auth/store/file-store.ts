/** Logins as plain-text JSON files, `<configDir>/auth/<profile>-<host>-<hash>.json`, mode 0600 in a 0700 folder. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonQuietly } from '../../json-syntax.js';
import { UsageError } from '../../errors.js';
import { checksModes, readPrivateFile, removeFile, writePrivateFile, type AtomicWriteHooks } from './files.js';
import { authDir, loginFileName } from './key.js';
import { checkLoginToWrite, loginToRecord, recordToLogin, refuseOtherKey } from './login.js';
import type { ProfileKey, StoredLogin, TokenStore } from './types.js';

export class FileTokenStore implements TokenStore {
  readonly kind = 'file' as const;
  readonly spec = 'file';
  readonly folder: string;
  readonly #hooks: AtomicWriteHooks;

  constructor(configDir: string, hooks: AtomicWriteHooks = {}) {
    this.folder = authDir(configDir);
    this.#hooks = hooks;
  }

  get location(): string {
    return `${this.folder} (plain-text files, mode 0600)`;
  }

  /** The file that holds this login. */
  path(key: ProfileKey): string {
    return join(this.folder, loginFileName(key));
  }

  /** The file and its mode as it is now (0600 as written; another when someone changed it, which `read` refuses). */
  describe(key: ProfileKey): string {
    const file = this.path(key);
    let mode = 0o600;
    try {
      if (checksModes) mode = statSync(file).mode & 0o777;
    } catch {
      // Not written yet: it will be 0600.
    }
    return `${file} (plain text, mode ${mode.toString(8).padStart(4, '0')}${(mode & 0o077) !== 0 ? ', readable by other users' : ''})`;
  }

  async read(key: ProfileKey): Promise<StoredLogin | undefined> {
    const file = this.path(key);
    const text = await readPrivateFile(file, 'the login file');
    if (text === undefined) return undefined;
    const parsed = parseJsonQuietly(text);
    if (!parsed.ok)
      throw new UsageError(`the login file ${file} is not JSON (${parsed.reason})`, {
        hint: 'remove it and run gantry auth login again',
        code: 'AUTH_STORE_CORRUPT',
      });
    return recordToLogin(parsed.value, `the login file ${file}`, key);
  }

  async write(login: StoredLogin): Promise<void> {
    const checked = checkLoginToWrite(login);
    const file = this.path(checked);
    // A file of another key cannot share the name (the name hashes the key), but a hand-copied one could.
    const existing = await readPrivateFile(file, 'the login file').catch(() => undefined);
    if (existing !== undefined) {
      const parsed = parseJsonQuietly(existing);
      // A broken file is replaced; the login of another key is not.
      if (parsed.ok) refuseOtherKey(() => recordToLogin(parsed.value, `the login file ${file}`, checked));
    }
    await writePrivateFile(file, `${JSON.stringify(loginToRecord(checked), null, 2)}\n`, this.#hooks);
  }

  async delete(key: ProfileKey): Promise<boolean> {
    return removeFile(this.path(key));
  }

  toJSON(): Record<string, unknown> {
    return { kind: this.kind, location: this.location };
  }
}
