// The lock file read, checked, printed and written in this process, on temporary files: every defect a person or a
// merge can leave is a LockFileError (exit 2) naming the file and the entry, and a lock is written whole or not at all.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { GantryError } from '../../lib/errors.js';
import { formatLockFile, LockFileError, lockFileName, parseLockFile, readLockFile, writeLockFile, type LockFile } from '../../lib/registry/lockfile.js';

const hash = `h1:${'A'.repeat(43)}=`;
const entry = { constraint: '~> 1.0', version: '1.2.0', location: 'https://example.com/network.tgz', hash };
const lockText = (modules: unknown, version: unknown = 1) => JSON.stringify({ version, modules });
const oneEntry = (fields: Record<string, unknown>, source = 'acme/network/aws') => lockText({ [source]: fields });

/** The LockFileError `call` throws: exit 2, code LOCK_FILE_INVALID; its message is returned for the caller to match. */
function lockError(call: () => unknown): string {
  let thrown: unknown;
  try {
    call();
  } catch (error) {
    thrown = error;
  }
  assert.ok(thrown instanceof LockFileError, `expected a LockFileError, got ${String(thrown)}`);
  assert.equal(thrown.exitCode, 2);
  assert.equal(thrown.code, 'LOCK_FILE_INVALID');
  return thrown.message;
}

/** The usage error (exit 2) a call refuses its argument with, e.g. `parseLockFile: text must be …`. */
async function refusal(call: () => unknown): Promise<GantryError> {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof GantryError, `expected a GantryError, got ${String(error)}`);
    assert.equal(error.exitCode, 2);
    return error;
  }
  assert.fail('expected a refusal');
}

describe('MUTATION-REGISTRY: the lock file (parse, read, format, write) in-process', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gantry-lockfile-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('parseLockFile', () => {
    it('MUTATION-REGISTRY: a valid lock keys each entry by its normalised address (host written, namespace and name lower case) and keeps the four fields only', () => {
      const lock = parseLockFile(
        lockText({ 'Acme/Network/aws': { ...entry, extra: 'dropped' }, 'example.com/acme/bucket/aws//sub/Dir': { ...entry, version: 'v0.1' } }),
      );
      assert.deepEqual(lock, {
        version: 1,
        modules: {
          'registry.terraform.io/acme/network/aws': entry,
          'example.com/acme/bucket/aws//sub/Dir': { ...entry, version: 'v0.1' },
        },
      });
      assert.deepEqual(parseLockFile('{"version": 1, "modules": {}}'), { version: 1, modules: {} });
    });

    it('MUTATION-REGISTRY: every refusal carries the hint that the lock is never rewritten silently; a hint of its own replaces it', () => {
      assert.throws(
        () => parseLockFile('[]'),
        (error: unknown) => error instanceof LockFileError && /never rewritten silently/.test(error.hint ?? '') && /gantry modules pin/.test(error.hint ?? ''),
      );
      assert.equal(new LockFileError('m', 'restore it').hint, 'restore it');
    });

    it('MUTATION-REGISTRY: errors name the file given, gantry.lock.json when none (or not a string) is given', () => {
      assert.equal(lockFileName, 'gantry.lock.json');
      assert.match(
        lockError(() => parseLockFile('{')),
        /^gantry\.lock\.json is not valid JSON \(.+\); it may be truncated or have a merge conflict$/,
      );
      assert.match(
        lockError(() => parseLockFile('{', 'locks/a.json')),
        /^locks\/a\.json is not valid JSON/,
      );
      assert.match(
        lockError(() => parseLockFile('{', 42 as unknown as string)),
        /^gantry\.lock\.json is not valid JSON/,
      );
      assert.match(
        lockError(() => parseLockFile('', 'l.json')),
        /^l\.json is not valid JSON/,
        'an empty file is a lock file that is not JSON',
      );
    });

    it('MUTATION-REGISTRY: text that is not a string is refused naming parseLockFile, not a TypeError', async () => {
      for (const text of [undefined, 42, null, {}]) {
        const error = await refusal(() => parseLockFile(text as unknown as string));
        assert.match(error.message, /^parseLockFile: text must be the JSON text of a lock file, got /);
      }
    });

    it('MUTATION-REGISTRY: a top level that is not an object, or has no version 1, or no modules object, is refused', () => {
      for (const text of ['[]', 'null', '"lock"', '1'])
        assert.equal(
          lockError(() => parseLockFile(text, 'l.json')),
          'l.json is not a JSON object',
        );
      assert.equal(
        lockError(() => parseLockFile('{"modules": {}}', 'l.json')),
        'l.json has no "version" field; a Gantry lock file starts with "version": 1 and has a "modules" object',
      );
      assert.equal(
        lockError(() => parseLockFile(lockText({}, 2), 'l.json')),
        'l.json has "version": 2; this Gantry reads version 1',
      );
      assert.equal(
        lockError(() => parseLockFile(lockText({}, '1'), 'l.json')),
        'l.json has "version": "1"; this Gantry reads version 1',
      );
      assert.equal(
        lockError(() => parseLockFile(lockText({}, null), 'l.json')),
        'l.json has "version": null; this Gantry reads version 1',
      );
      for (const modules of [null, [], 'x', 3])
        assert.equal(
          lockError(() => parseLockFile(lockText(modules), 'l.json')),
          'l.json has no "modules" object',
        );
      assert.equal(
        lockError(() => parseLockFile('{"version": 1}', 'l.json')),
        'l.json has no "modules" object',
      );
    });

    it('MUTATION-REGISTRY: an entry that is not an object, lacks a field or has a field that is not a string is refused by name', () => {
      for (const value of [null, [], 'x', 1]) {
        assert.equal(
          lockError(() => parseLockFile(oneEntry(value as unknown as Record<string, unknown>), 'l.json')),
          'l.json: the entry "acme/network/aws" is not an object',
        );
      }
      for (const field of ['constraint', 'version', 'location', 'hash'] as const) {
        const { [field]: _left, ...without } = entry;
        assert.equal(
          lockError(() => parseLockFile(oneEntry(without), 'l.json')),
          `l.json: the entry "acme/network/aws" has no "${field}" field`,
        );
        for (const [value, shown] of [
          [null, 'null'],
          [1, '1'],
          [['x'], '["x"]'],
        ] as const) {
          assert.equal(
            lockError(() => parseLockFile(oneEntry({ ...entry, [field]: value }), 'l.json')),
            `l.json: the entry "acme/network/aws" has a "${field}" that is not a string (${shown})`,
          );
        }
      }
    });

    it('MUTATION-REGISTRY: a key that is not a module address is refused with the address error', () => {
      assert.match(
        lockError(() => parseLockFile(oneEntry(entry, 'acme/network'), 'l.json')),
        /^l\.json: the entry "acme\/network" is not a module address: the module address "acme\/network" has 2 parts$/,
      );
      assert.match(
        lockError(() => parseLockFile(oneEntry(entry, 'https://example.com/x.tgz'), 'l.json')),
        /is not a module address: .*download location/,
      );
    });

    it('MUTATION-REGISTRY: two keys for one module (case or a written default host) are refused, naming both; different modules are not', () => {
      assert.equal(
        lockError(() => parseLockFile(lockText({ 'acme/network/aws': entry, 'registry.terraform.io/ACME/Network/aws': entry }), 'l.json')),
        'l.json: the entries "acme/network/aws" and "registry.terraform.io/ACME/Network/aws" are the same module registry.terraform.io/acme/network/aws (host, namespace and name are compared without regard to case); a lock pins one version per address',
      );
      const three = parseLockFile(lockText({ 'acme/network/aws': entry, 'acme/network/gcp': entry, 'acme/network/aws//sub': entry }));
      assert.deepEqual(Object.keys(three.modules), [
        'registry.terraform.io/acme/network/aws',
        'registry.terraform.io/acme/network/gcp',
        'registry.terraform.io/acme/network/aws//sub',
      ]);
    });

    it('MUTATION-REGISTRY: a version that is not a version, or a constraint that does not parse, is refused naming the entry', () => {
      assert.equal(
        lockError(() => parseLockFile(oneEntry({ ...entry, version: 'latest' }), 'l.json')),
        'l.json: the entry "acme/network/aws" has "version": "latest", which is not a version',
      );
      assert.match(
        lockError(() => parseLockFile(oneEntry({ ...entry, constraint: '>= one' }), 'l.json')),
        /^l\.json: the entry "acme\/network\/aws" has an invalid "constraint": the version constraint ">= one" has an invalid version "one"$/,
      );
      // An empty constraint is "any version", as in the manifest.
      assert.equal(parseLockFile(oneEntry({ ...entry, constraint: '' })).modules['registry.terraform.io/acme/network/aws']?.constraint, '');
    });

    it('MUTATION-REGISTRY: an empty or blank location is refused', () => {
      for (const location of ['', '  ']) {
        assert.equal(
          lockError(() => parseLockFile(oneEntry({ ...entry, location }), 'l.json')),
          'l.json: the entry "acme/network/aws" has an empty "location"',
        );
      }
    });

    it('MUTATION-REGISTRY: the hash is exactly h1: and 44 base64 characters ending in "="', () => {
      for (const good of [hash, `h1:${'a'.repeat(20)}+/09${'Z'.repeat(19)}=`]) {
        assert.equal(parseLockFile(oneEntry({ ...entry, hash: good })).modules['registry.terraform.io/acme/network/aws']?.hash, good);
      }
      for (const bad of [
        '',
        'md5:x',
        `h2:${'A'.repeat(43)}=`,
        `H1:${'A'.repeat(43)}=`,
        `h1:${'A'.repeat(42)}=`,
        `h1:${'A'.repeat(44)}=`,
        `h1:${'A'.repeat(44)}`,
        `h1:${'A'.repeat(42)}==`,
        `h1:${'A'.repeat(42)}-=`,
        `h1:${'A'.repeat(42)}_=`,
        `h1:${'A'.repeat(42)} =`,
        ` ${hash}`,
        `x${hash}`,
        `${hash}x`,
        `${hash}\n`,
      ]) {
        assert.equal(
          lockError(() => parseLockFile(oneEntry({ ...entry, hash: bad }), 'l.json')),
          `l.json: the entry "acme/network/aws" has a malformed hash ${JSON.stringify(bad)} (expected h1: and 44 base64 characters)`,
          bad,
        );
      }
    });
  });

  describe('formatLockFile', () => {
    it('MUTATION-REGISTRY: sources sorted, fields in a fixed order, extra fields dropped, version 1, two-space indent and a final newline', () => {
      const lock = {
        version: 1,
        modules: {
          'z.example/acme/b/aws': { hash, location: 'l2', version: '2.0.0', constraint: '', note: 'x' },
          'a.example/acme/a/aws': { version: '1.0.0', constraint: '~> 1.0', hash, location: 'l1' },
        },
      } as unknown as LockFile;
      const text = formatLockFile(lock);
      assert.equal(
        text,
        [
          '{',
          '  "version": 1,',
          '  "modules": {',
          '    "a.example/acme/a/aws": {',
          '      "constraint": "~> 1.0",',
          '      "version": "1.0.0",',
          '      "location": "l1",',
          `      "hash": "${hash}"`,
          '    },',
          '    "z.example/acme/b/aws": {',
          '      "constraint": "",',
          '      "version": "2.0.0",',
          '      "location": "l2",',
          `      "hash": "${hash}"`,
          '    }',
          '  }',
          '}',
          '',
        ].join('\n'),
      );
      assert.equal(formatLockFile({ version: 1, modules: {} }), '{\n  "version": 1,\n  "modules": {}\n}\n');
      assert.deepEqual(parseLockFile(text), {
        version: 1,
        modules: {
          'a.example/acme/a/aws': lock.modules['a.example/acme/a/aws'],
          'z.example/acme/b/aws': { constraint: '', version: '2.0.0', location: 'l2', hash },
        },
      });
    });

    it('MUTATION-REGISTRY: a lock or a modules value that is not an object is refused naming formatLockFile', async () => {
      for (const lock of [undefined, null, 'x', []]) {
        assert.match(
          (await refusal(() => formatLockFile(lock as unknown as LockFile))).message,
          /^formatLockFile: lock must be a lock file \(readLockFile, parseLockFile or pin\), got /,
        );
      }
      for (const modules of [undefined, null, 'x', []]) {
        assert.match(
          (await refusal(() => formatLockFile({ version: 1, modules } as unknown as LockFile))).message,
          /^formatLockFile: lock\.modules must be an object of lock entries, got /,
        );
      }
    });
  });

  describe('readLockFile', () => {
    it('MUTATION-REGISTRY: a missing file is an empty lock; a present one is parsed, its errors naming the path', async () => {
      assert.deepEqual(await readLockFile(join(dir, 'absent.json')), { version: 1, modules: {} });
      const file = join(dir, 'read.json');
      await writeFile(file, oneEntry(entry));
      assert.deepEqual(await readLockFile(file), { version: 1, modules: { 'registry.terraform.io/acme/network/aws': entry } });
      await writeFile(file, '{"version": 3, "modules": {}}');
      await assert.rejects(
        readLockFile(file),
        (error: unknown) => error instanceof LockFileError && error.message === `${file} has "version": 3; this Gantry reads version 1`,
      );
    });

    it('MUTATION-REGISTRY: a folder is a usage error naming the lock file, with a hint; a path that is not a string names readLockFile', async () => {
      const error = await refusal(() => readLockFile(dir));
      assert.equal(error.message, `the lock file ${dir} is a folder, not a file`);
      assert.equal(error.hint, 'give the path of a lock file (a regular file next to the manifest)');
      for (const file of [undefined, '', 42]) {
        assert.match(
          (await refusal(() => readLockFile(file as unknown as string))).message,
          /^readLockFile: file must be the path of a lock file such as gantry\.lock\.json, got /,
        );
      }
    });
  });

  describe('writeLockFile', () => {
    const lock: LockFile = { version: 1, modules: { 'registry.terraform.io/acme/network/aws': entry } };

    it('MUTATION-REGISTRY: writes the formatted lock, replaces an older one, and leaves no temporary file', async () => {
      const folder = await mkdtemp(join(dir, 'write-'));
      const file = join(folder, lockFileName);
      await writeLockFile(file, lock);
      assert.equal(await readFile(file, 'utf8'), formatLockFile(lock));
      await writeLockFile(file, { version: 1, modules: {} });
      assert.equal(await readFile(file, 'utf8'), formatLockFile({ version: 1, modules: {} }));
      await Promise.all([writeLockFile(file, lock), writeLockFile(file, lock)]);
      assert.deepEqual(await readLockFile(file), lock);
      assert.deepEqual(await readdir(folder), [lockFileName]);
    });

    it('MUTATION-REGISTRY: a bad lock or path is refused before anything is written', async () => {
      const folder = await mkdtemp(join(dir, 'refused-'));
      const file = join(folder, lockFileName);
      assert.match(
        (await refusal(() => writeLockFile(file, { version: 1 } as unknown as LockFile))).message,
        /^writeLockFile: lock\.modules must be an object of lock entries/,
      );
      assert.match((await refusal(() => writeLockFile(file, null as unknown as LockFile))).message, /^writeLockFile: lock must be a lock file/);
      for (const path of [undefined, '']) {
        assert.match(
          (await refusal(() => writeLockFile(path as unknown as string, lock))).message,
          /^writeLockFile: file must be the path of a lock file such as gantry\.lock\.json, got /,
        );
      }
      const missing = join(folder, 'no-such-folder', lockFileName);
      const error = await refusal(() => writeLockFile(missing, lock));
      assert.equal(error.code, 'PATH_NOT_WRITABLE');
      assert.match(error.message, /^the lock file .+ cannot be written: the folder .+no-such-folder does not exist$/);
      assert.deepEqual(await readdir(folder), []);
    });

    it('MUTATION-REGISTRY: a write that fails is a usage error naming the lock file, and its temporary file is removed', async () => {
      // A name that fits but leaves its temporary no room for the usual suffix is still written (the temporary is
      // named by a hash then), and nothing else is left beside it.
      const folder = await mkdtemp(join(dir, 'long-'));
      const long = join(folder, `${'l'.repeat(245)}.json`);
      await writeLockFile(long, lock);
      assert.deepEqual(await readLockFile(long), lock);
      assert.deepEqual(await readdir(folder), [basename(long)]);
      // A path through a link and "..": checked as written (a new file), written where the link leads, where the name
      // is a folder, so the rename after the temporary file fails.
      const outside = await mkdtemp(join(dir, 'outside-'));
      await mkdir(join(outside, 'deep'));
      await mkdir(join(outside, lockFileName));
      await writeFile(join(outside, lockFileName, 'keep'), 'x');
      const base = await mkdtemp(join(dir, 'base-'));
      await symlink(join(outside, 'deep'), join(base, 'link'));
      const renamed = await refusal(() => writeLockFile(`${base}/link/../${lockFileName}`, lock));
      assert.equal(renamed.code, 'PATH_NOT_WRITABLE');
      assert.match(renamed.message, /^the lock file .+ could not be written \(/);
      assert.deepEqual((await readdir(outside)).sort(), ['deep', lockFileName]);
      assert.deepEqual(await readdir(base), ['link']);
    });
  });
});
