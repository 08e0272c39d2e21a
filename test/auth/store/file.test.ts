// The plain-text file store: mode 0600 in a 0700 folder, temporary name + rename, refusal of files others can read.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileTokenStore, loginFileName, profileKey, resolveConfigDir } from '../../../lib/auth/store/index.js';
import { assertNoCanary, canaries, makeLogin } from './helpers/logins.js';

describe('auth token store: plain-text file (only when asked)', function () {
  this.timeout(60_000);
  let configDir: string;
  const key = profileKey({ authUrl: 'http://127.0.0.1:5762', clientId: 'client-a', profile: 'default' });
  const mode = (path: string) => statSync(path).mode & 0o777;

  beforeEach(() => {
    configDir = mkdtempSync(join(tmpdir(), 'gantry-auth-file-'));
  });
  afterEach(() => {
    rmSync(configDir, { recursive: true, force: true });
  });

  it('configDir: GANTRY_CONFIG_DIR, else $XDG_CONFIG_HOME/gantry (absolute only), else ~/.config/gantry; the file is <configDir>/auth/<profile>-<host>-<hash>.json', () => {
    assert.equal(resolveConfigDir(undefined, { GANTRY_CONFIG_DIR: '/srv/g', XDG_CONFIG_HOME: '/x', HOME: '/h' }), '/srv/g');
    assert.equal(resolveConfigDir(undefined, { XDG_CONFIG_HOME: '/x', HOME: '/h' }), '/x/gantry');
    assert.equal(resolveConfigDir(undefined, { XDG_CONFIG_HOME: 'relative', HOME: '/h' }), '/h/.config/gantry');
    assert.equal(resolveConfigDir(undefined, { HOME: '/h' }), '/h/.config/gantry');
    assert.equal(resolveConfigDir('/given', { GANTRY_CONFIG_DIR: '/srv/g' }), '/given');
    assert.match(loginFileName(key), /^default-127\.0\.0\.1_5762-[0-9a-f]{12}\.json$/);
    assert.notEqual(loginFileName(key), loginFileName({ ...key, clientId: 'client-b' }));
    const store = new FileTokenStore(configDir);
    assert.equal(store.describe(key), `${join(configDir, 'auth', loginFileName(key))} (plain text, mode 0600)`);
  });

  it('DEV-AUTH-REFRESH-REUSE: writes mode 0600 in a 0700 folder whatever the umask, tightens a folder others could enter, and reads the login back whole', async () => {
    const previous = process.umask(0o000);
    try {
      mkdirSync(join(configDir, 'auth'), { mode: 0o755 });
      chmodSync(join(configDir, 'auth'), 0o755);
      const store = new FileTokenStore(configDir);
      const t = canaries('file');
      const login = makeLogin(key, t);
      await store.write(login);
      const file = store.path(key);
      assert.equal(mode(file), 0o600);
      assert.equal(mode(join(configDir, 'auth')), 0o700);
      const read = await new FileTokenStore(configDir).read(key);
      assert.ok(read);
      assert.deepEqual({ ...read, tokens: { ...read.tokens } }, login);
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).tokens.refreshToken, t.refresh);
      assertNoCanary(t, [store.location, store.describe(key), JSON.stringify(read)], 'the location or a logged login');
      // A fresh configDir: the folders are made private too.
      const fresh = join(configDir, 'nested', 'gantry');
      await new FileTokenStore(fresh).write(login);
      assert.equal(mode(join(fresh, 'auth')), 0o700);
    } finally {
      process.umask(previous);
    }
  });

  it('writes to a temporary name and renames: a write that fails before the rename leaves the previous file intact and no temporary file behind', async () => {
    const old = canaries('old');
    await new FileTokenStore(configDir).write(makeLogin(key, old));
    const file = new FileTokenStore(configDir).path(key);
    const before = readFileSync(file, 'utf8');
    const inodeBefore = statSync(file).ino;
    let sawTemporary = '';
    const failing = new FileTokenStore(configDir, {
      beforeRename: (temporary) => {
        sawTemporary = temporary;
        // The new content is complete in the temporary file, in the same folder, before anything replaces the old one.
        assert.equal(mode(temporary), 0o600);
        assert.equal(join(temporary, '..'), join(configDir, 'auth'));
        throw Object.assign(new Error('disk full (simulated)'), { code: 'ENOSPC' });
      },
    });
    await assert.rejects(failing.write(makeLogin(key, canaries('new'))), /disk full/);
    assert.ok(sawTemporary !== '' && !existsSync(sawTemporary));
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.deepEqual(readdirSync(join(configDir, 'auth')), [loginFileName(key)]);
    // A successful write replaces the file by rename (a new inode), never by rewriting it in place.
    await new FileTokenStore(configDir).write(makeLogin(key, canaries('next')));
    assert.notEqual(statSync(file).ino, inodeBefore);
  });

  it('a write cut off by the operating system (the file size limit: EFBIG) leaves the previous file whole; temporary files of dead writers are removed', async function () {
    const old = canaries('before-crash');
    await new FileTokenStore(configDir).write(makeLogin(key, old));
    const file = new FileTokenStore(configDir).path(key);
    const before = readFileSync(file, 'utf8');
    const child = fileURLToPath(new URL('./helpers/big-write.ts', import.meta.url));
    // ulimit -f counts 1024-byte blocks: 64 KiB, while the child writes a login of about 1 MiB.
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
      const proc = spawn('bash', ['--norc', '-c', `ulimit -f 64 && exec "${process.execPath}" --import tsx "${child}" "${configDir}"`], {
        env: { ...process.env, TSX_DISABLE_CACHE: '1' },
      });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
      });
      proc.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    assert.match(result.stdout, /writing/, result.stderr);
    assert.ok(
      result.signal === 'SIGXFSZ' || /EFBIG|File too large/.test(result.stderr),
      `the child was not stopped by the size limit: ${result.code} ${result.signal} ${result.stderr.slice(-500)}`,
    );
    assert.notEqual(result.code, 0);
    assert.doesNotMatch(result.stdout, /written/);
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.equal((await new FileTokenStore(configDir).read(key))?.tokens.accessToken, old.access);
    // Node ignores SIGXFSZ, so the write failed with EFBIG and the writer removed its temporary file itself.
    const leftovers = () => readdirSync(join(configDir, 'auth')).filter((name) => name.endsWith('.tmp'));
    assert.deepEqual(leftovers(), []);
    // A writer killed outright leaves its temporary file, which holds tokens: the next write removes it once it is
    // stale (a fresh one may belong to a writer still at work), a logout at once.
    const dead = join(configDir, 'auth', `.${loginFileName(key)}.99999.0123456789ab.tmp`);
    writeFileSync(dead, 'CANARY-partial', { mode: 0o600 });
    await new FileTokenStore(configDir).write(makeLogin(key, canaries('after-crash')));
    assert.equal(leftovers().length, 1);
    const stale = new Date(Date.now() - 120_000);
    utimesSync(dead, stale, stale);
    await new FileTokenStore(configDir).write(makeLogin(key, canaries('later')));
    assert.deepEqual(leftovers(), []);
    writeFileSync(dead, 'CANARY-partial', { mode: 0o600 });
    assert.equal(await new FileTokenStore(configDir).delete(key), true);
    assert.deepEqual(leftovers(), []);
  });

  for (const [label, fileMode] of [
    ['world-readable (0644)', 0o644],
    ['group-readable (0640)', 0o640],
    ['world-writable (0602)', 0o602],
  ] as const) {
    it(`refuses to read a ${label} login file, says why and how to fix it (chmod 600), without the tokens`, async () => {
      const t = canaries('perm');
      const store = new FileTokenStore(configDir);
      await store.write(makeLogin(key, t));
      const file = store.path(key);
      chmodSync(file, fileMode);
      await assert.rejects(store.read(key), (error: Error & { code?: string; hint?: string; exitCode?: number }) => {
        assert.equal(error.code, 'AUTH_FILE_PERMISSIONS');
        assert.equal(error.exitCode, 2);
        assert.match(
          error.message,
          new RegExp(
            `the login file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} can be read or written by other users \\(mode 0${fileMode.toString(8)}\\); refusing to use the tokens in it`,
          ),
        );
        assert.match(error.hint ?? '', new RegExp(`chmod 600 ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
        assert.match(error.hint ?? '', /gantry auth logout/);
        assertNoCanary(t, [error.message, error.hint, error.stack], 'the error');
        return true;
      });
      chmodSync(file, 0o600);
      assert.equal((await store.read(key))?.tokens.accessToken, t.access);
    });
  }

  it('refuses a symbolic link in place of the file, and reports a broken file without quoting it; a write replaces a broken file', async () => {
    const store = new FileTokenStore(configDir);
    const file = store.path(key);
    mkdirSync(join(configDir, 'auth'), { mode: 0o700 });
    const elsewhere = join(configDir, 'elsewhere.json');
    writeFileSync(elsewhere, '{}', { mode: 0o600 });
    symlinkSync(elsewhere, file);
    assert.ok(lstatSync(file).isSymbolicLink());
    await assert.rejects(store.read(key), { code: 'AUTH_FILE_PERMISSIONS', message: /is a symbolic link/ });
    rmSync(file);
    writeFileSync(file, '{"format": "gantry-auth-login/1", "tokens": CANARY-broken', { mode: 0o600 });
    await assert.rejects(store.read(key), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'AUTH_STORE_CORRUPT');
      assert.match(error.message, /is not JSON \(line 1, column \d+/);
      assert.doesNotMatch(error.message, /CANARY/);
      return true;
    });
    const t = canaries('replace');
    await store.write(makeLogin(key, t));
    assert.equal((await store.read(key))?.tokens.idToken, t.id);
    assert.equal(await store.delete(key), true);
    assert.equal(await store.delete(key), false);
    assert.equal(await store.read(key), undefined);
  });
});
