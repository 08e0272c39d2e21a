// PATHS: every path a user gives Gantry (flags, variables, configuration files, lock and data files) is checked
// before any work. /proc/nope (where Node's recursive mkdir spins), /dev/zero and /dev/full (read without end), a
// FIFO (an open that waits for a writer), a folder where a file is expected, an empty path: each is exit 2 with a
// message naming the path and where it came from — never a hang, unbounded memory or a raw EISDIR/EPERM.
// Real processes over real files; each is killed by a timer, so a hang fails its test instead of stalling the suite.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localFileLimits, readLocalFile, readLocalFileSync } from '../../lib/local-paths.js';

// The built command (`npm run build` first, as `pretest` does): tsx compiling the sources cost each run a second of CPU.
const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
/** Far more than a refusal needs, far less than a hang would take. */
const killAfterMs = 60_000; // a hang, not a slow start: the command loads slowly on a busy two-core machine

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function gantry(args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, HOME: options.cwd, GANTRY_LOG: 'warn', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Exit 2, in time, the message matching `expected`, and no raw Node error text. */
function refused(ran: Ran, expected: RegExp, what: string): void {
  assert.equal(ran.signal, null, `${what}: killed after ${killAfterMs} ms (a hang); stderr: ${ran.stderr}`);
  assert.equal(ran.code, 2, `${what}: exit ${ran.code}, stderr: ${ran.stderr}`);
  assert.match(ran.stderr, expected, what);
  assert.doesNotMatch(
    ran.stderr,
    /illegal operation on a directory|EPERM: operation not permitted, mkdir|Invalid string length|\n\s+at /,
    `${what}: a raw error`,
  );
}

describe('PATHS: /proc/nope, /dev/zero, /dev/full, a FIFO, a folder, an empty path — exit 2 before any work', function () {
  this.timeout(120_000);
  let dir: string;
  let fifo: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gantry-paths-'));
    fifo = join(dir, 'a-fifo');
    execFileSync('mkfifo', [fifo]);
    writeFileSync(join(dir, 'gantry.modules.json'), JSON.stringify({ app: { source: 'acme/app/aws', version: '1.0.0' } }));
    writeFileSync(join(dir, 'notes.txt'), 'not json\n');
    writeFileSync(join(dir, 'mine.json'), JSON.stringify({ secrets: {} }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A folder holding a manifest and, as its lock file, `lock` (a FIFO, a link to a device …). */
  function project(name: string, lock: (path: string) => void): string {
    const folder = join(dir, name);
    mkdirSync(folder);
    writeFileSync(join(folder, 'gantry.modules.json'), JSON.stringify({ app: { source: 'acme/app/aws', version: '1.0.0' } }));
    lock(join(folder, 'gantry.lock.json'));
    return folder;
  }

  it('modules: --file /dev/full, a folder or an empty path; --dir /proc/nope, /sys/kernel, /dev/full or an empty path; TF_CLI_CONFIG_FILE=/dev/zero', async () => {
    const lockDir = project('pinned', (path) =>
      writeFileSync(
        path,
        JSON.stringify({
          version: 1,
          modules: {
            'registry.terraform.io/acme/app/aws': {
              constraint: '1.0.0',
              version: '1.0.0',
              location: 'https://127.0.0.1:9/x.tar.gz',
              hash: `h1:${'A'.repeat(43)}=`,
            },
          },
        }),
      ),
    );
    const cases: Array<[string[], RegExp, Record<string, string>?, string?]> = [
      [['modules', 'pin', '--file', '/dev/full'], /the manifest \/dev\/full is a device .*not a regular file/],
      [['modules', 'pin', '--file', '.'], /the manifest .* is a folder, not a file/],
      [['modules', 'pin', '--file', ''], /--file is empty/],
      [['modules', 'install', '--dir', ''], /--dir is empty/, undefined, lockDir],
      [['modules', 'verify', '--dir', ''], /--dir is empty/, undefined, lockDir],
      [
        ['modules', 'install', '--dir', '/proc/nope'],
        /the install folder \(--dir\) \/proc\/nope cannot be created: mkdir \/proc\/nope failed/,
        undefined,
        lockDir,
      ],
      [['modules', 'install', '--dir', '/dev/full'], /the install folder \(--dir\) \/dev\/full is a device/, undefined, lockDir],
      [
        ['modules', 'versions', 'acme/app/aws'],
        /the Terraform CLI configuration \(TF_CLI_CONFIG_FILE\) \/dev\/zero is a device/,
        { TF_CLI_CONFIG_FILE: '/dev/zero' },
      ],
      [
        ['modules', 'versions', 'acme/app/aws'],
        /the Terraform CLI configuration \(TF_CLI_CONFIG_FILE\) .* is a folder, not a file/,
        { TF_CLI_CONFIG_FILE: dir },
      ],
    ];
    if (existsSync('/sys/kernel'))
      cases.push([['modules', 'install', '--dir', '/sys/kernel'], /the install folder \(--dir\) \/sys\/kernel is not writable/, undefined, lockDir]);
    const runs = await Promise.all(cases.map(([args, , env, cwd]) => gantry(args, { cwd: cwd ?? dir, ...(env ? { env } : {}) })));
    runs.forEach((ran, i) => refused(ran, cases[i]![1], cases[i]![0].join(' ')));
    assert.deepEqual(readdirSync(lockDir).sort(), ['gantry.lock.json', 'gantry.modules.json'], 'an empty --dir installed nothing in the current folder');
  });

  it('modules pin, install and verify: a lock file that is a FIFO or a link to /dev/full', async () => {
    const withFifo = project('fifo-lock', (path) => execFileSync('mkfifo', [path]));
    const withDevice = project('device-lock', (path) => symlinkSync('/dev/full', path));
    const cases = ['pin', 'install', 'verify'].flatMap((command) => [
      { command, cwd: withFifo, expected: /the lock file .*gantry\.lock\.json is a FIFO \(named pipe\), not a regular file/ },
      { command, cwd: withDevice, expected: /the lock file .*gantry\.lock\.json is a device .*not a regular file/ },
    ]);
    const runs = await Promise.all(cases.map(({ command, cwd }) => gantry(['modules', command], { cwd })));
    runs.forEach((ran, i) => refused(ran, cases[i]!.expected, `modules ${cases[i]!.command} in ${cases[i]!.cwd}`));
  });

  it('secrets: --ca-cert /dev/zero or /dev/full, SECRETS_CAPATH=/dev/full, SECRETS_CLIENT_CERT a FIFO, key=@/dev/zero — bounded, named, nothing sent', async () => {
    const address = { SECRETS_ADDR: 'http://127.0.0.1:9', SECRETS_TOKEN: 'root' };
    const cases: Array<[string[], RegExp, Record<string, string>]> = [
      [['secrets', '--ca-cert', '/dev/zero', 'get', 'secret/app/db'], /the CA certificate file \(--ca-cert\) \/dev\/zero is a device/, address],
      [['secrets', '--ca-cert', '/dev/full', 'get', 'secret/app/db'], /the CA certificate file \(--ca-cert\) \/dev\/full is a device/, address],
      [['secrets', '--ca-cert', '.', 'get', 'secret/app/db'], /the CA certificate file \(--ca-cert\) \. is a folder, not a file/, address],
      [['secrets', 'get', 'secret/app/db'], /the CA folder \(SECRETS_CAPATH\) \/dev\/full is not a folder/, { ...address, SECRETS_CAPATH: '/dev/full' }],
      [['secrets', 'get', 'secret/app/db'], /the CA certificate file \(SECRETS_CACERT\) \/dev\/zero is a device/, { ...address, SECRETS_CACERT: '/dev/zero' }],
      [
        ['secrets', 'get', 'secret/app/db'],
        /the client certificate \(SECRETS_CLIENT_CERT\) .*a-fifo is a FIFO/,
        { ...address, SECRETS_CLIENT_CERT: fifo, SECRETS_CLIENT_KEY: fifo },
      ],
      [
        ['secrets', 'put', 'secret/app/db', 'password=@/dev/zero'],
        /cannot read \/dev\/zero: it is a device or another special file.*nothing was sent/,
        address,
      ],
    ];
    const runs = await Promise.all(cases.map(([args, , env]) => gantry(args, { cwd: dir, env })));
    runs.forEach((ran, i) => refused(ran, cases[i]![1], cases[i]![0].join(' ')));
  });

  it('gate: --report /proc/nope, /dev/full or empty and --config /dev/zero, a FIFO, a folder — refused before any analysis', async () => {
    const found = join(dir, 'found');
    mkdirSync(join(found, 'lighthouserc.json'), { recursive: true });
    const url = 'http://127.0.0.1:9/';
    const cases: Array<[string[], RegExp, string?]> = [
      [['gate', url, '--report', '/proc/nope', '--runs', '1'], /the report folder \(--report\) \/proc\/nope cannot be created/],
      [['gate', url, '--report', '/dev/full', '--runs', '1'], /the report folder \(--report\) \/dev\/full is a device/],
      [['gate', url, '--report', '', '--runs', '1'], /the report folder \(--report\) is empty/],
      [['gate', url, '--config', '/dev/zero'], /the Lighthouse CI configuration \(--config\) \/dev\/zero is a device/],
      [['gate', url, '--config', fifo], /the Lighthouse CI configuration \(--config\) .*a-fifo is a FIFO/],
      [['gate', '--config', '.'], /the Lighthouse CI configuration \(--config\) .* is a folder, not a file/],
      [['gate'], /the Lighthouse CI configuration \(found in the current folder\) .*lighthouserc\.json is a folder, not a file/, found],
    ];
    const runs = await Promise.all(cases.map(([args, , cwd]) => gantry(args, { cwd: cwd ?? dir, env: { GANTRY_PAGEANALYSIS_URL: 'http://127.0.0.1:9/' } })));
    runs.forEach((ran, i) => refused(ran, cases[i]![1], cases[i]![0].join(' ')));
  });

  it("dev secrets --data-file: /proc/nope/x.json, /dev/full, a FIFO, a folder, an empty path, not JSON, not the server's format — exit 2, not 3", async () => {
    const cases: Array<[string, RegExp]> = [
      ['/proc/nope/x.json', /the folder of the data file \(--data-file\) \/proc\/nope cannot be created/],
      ['/dev/full', /the data file \(--data-file\) \/dev\/full is a device/],
      [fifo, /the data file \(--data-file\) .*a-fifo is a FIFO/],
      ['.', /the data file \(--data-file\) .* is a folder, not a file/],
      ['', /--data-file is empty/],
      ['notes.txt', /the data file \(--data-file\) .*notes\.txt is not valid JSON \(line 1, column 1/],
      ['mine.json', /the data file \(--data-file\) .*mine\.json is not a secrets dev server data file/],
    ];
    const runs = await Promise.all(cases.map(([file]) => gantry(['dev', 'secrets', '--data-file', file, '--port', '0'], { cwd: dir })));
    runs.forEach((ran, i) => refused(ran, cases[i]![1], `dev secrets --data-file ${cases[i]![0]}`));
    assert.doesNotMatch(runs.map((ran) => ran.stderr).join('\n'), /not json/, "the data file's text is never quoted");
  });

  describe('readLocalFile (lib/local-paths.ts)', () => {
    it('refuses devices, FIFOs and folders, stops at the cap, and reads a pipe when allowed', async function () {
      this.timeout(15_000);
      await assert.rejects(readLocalFile('/dev/zero', { what: 'the test file' }), /the test file \/dev\/zero is a device/);
      assert.throws(() => readLocalFileSync(fifo, { what: 'the test file' }), /is a FIFO \(named pipe\), not a regular file/);
      await assert.rejects(readLocalFile(dir, { what: 'the test file' }), /is a folder, not a file/);
      await assert.rejects(readLocalFile('', { what: 'the test file' }), /the test file: the path is empty/);
      const big = join(dir, 'big');
      writeFileSync(big, Buffer.alloc(2048));
      await assert.rejects(
        readLocalFile(big, { what: 'the test file', maxBytes: 1024 }),
        (error: Error & { exitCode?: number }) => error.exitCode === 2 && /2048 bytes, more than the 1024 bytes/.test(error.message),
      );
      assert.equal(await readLocalFile(join(dir, 'missing'), { what: 'the test file', missingOk: true }), undefined);
      assert.ok(localFileLimits.config <= 16 * 1024 * 1024);
      // A pipe with a writer is read to its end; one that writes more than the cap is cut off there.
      spawn('sh', ['-c', `printf 'hello' > '${fifo}'`]);
      assert.equal((await readLocalFile(fifo, { what: 'the test pipe', allowPipe: true })).toString(), 'hello');
      const flood = spawn('sh', ['-c', `head -c 100000 /dev/zero > '${fifo}'`]);
      await assert.rejects(readLocalFile(fifo, { what: 'the test pipe', allowPipe: true, maxBytes: 1000 }), /the test pipe .* is more than the 1000 bytes/);
      flood.kill();
    });
  });
});
