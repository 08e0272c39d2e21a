// `gantry dev storage`: the embedded storage API alone, in a process of its own. Its first stdout lines are
// STORAGE_BASE_URL=… and STORAGE_TOKEN=…, then an `export …` line a shell takes, and they work with plain fetch; the
// token never comes from argv; bad input is exit 2 before anything listens; its default port taken falls back to a free
// one, a port asked for and taken is exit 2; SIGTERM stops it cleanly (state kept with --data-dir, the temporary folder
// removed); a reader gone from stdout ends it quietly; `gantry storage` pointed at a path outside the API gets the
// base-URL hint, not "no such file"; --help loads no server code.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { exited, spawnGantry, startGantry, stopGantry } from './gantry-process.js';

const SECRET = 'ya29.canary-storage-token-dev-cli';

interface Started {
  child: ChildProcess;
  url: string;
  token?: string;
  stdout: () => string;
}

/** Starts `gantry dev storage <args>` and waits for its first lines (the base URL, and the token line it prints). */
async function startStorage(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const tokenExpected = env.STORAGE_TOKEN === undefined;
  const { child, value, stdout } = await startGantry(
    ['dev', 'storage', ...args],
    (out) => {
      const url = /^STORAGE_BASE_URL=(\S+)$/m.exec(out)?.[1];
      if (!url || !/Press Ctrl-C to stop\.$/m.test(out)) return undefined;
      return { url, token: /^STORAGE_TOKEN=(\S+)$/m.exec(out)?.[1] ?? (tokenExpected ? '' : undefined) };
    },
    env,
  );
  return { child, url: value.url, ...(value.token !== undefined ? { token: value.token } : {}), stdout };
}

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnGantry(['dev', 'storage', ...args], env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    // A server that did start would run until stopped: that is the failure these runs are about.
    const timer = setTimeout(() => child.kill('SIGTERM'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const api = (url: string, token: string, pathAndQuery: string, init: RequestInit = {}) =>
  fetch(`${url}${pathAndQuery}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) } });

describe('gantry dev storage', function () {
  this.timeout(120_000);
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'gantry-dev-storage-test-'));
  });
  after(() => rm(scratch, { recursive: true, force: true }));

  it('STO-BASE-PREFIX STO-ABOUT-GET: STORAGE_BASE_URL= and STORAGE_TOKEN= are the first lines, then the export line a shell takes; fetch with them works, another token is 401; SIGTERM stops it (exit 0) and removes its temporary folder', async () => {
    const server = await startStorage(['--port', '0']);
    try {
      const lines = server.stdout().split('\n');
      assert.match(lines[0]!, /^STORAGE_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/, 'line 1: the base URL, for `| head -1`');
      assert.match(lines[1]!, /^STORAGE_TOKEN=ya29\.[A-Za-z0-9_-]{20,}$/, 'line 2: the token it made');
      assert.equal(lines[2], `export STORAGE_BASE_URL=${server.url} STORAGE_TOKEN=${server.token!}`, 'line 3: the export line, as gantry dev prints');
      const pasted = execFileSync('sh', ['-c', `${lines[2]!}\nsh -c 'printf "%s %s" "$STORAGE_BASE_URL" "$STORAGE_TOKEN"'`], { encoding: 'utf8' });
      assert.equal(pasted, `${server.url} ${server.token!}`, 'pasted into a shell, both reach a child process');
      const folder = /state in (\S+) \(temporary/.exec(server.stdout())?.[1];
      assert.ok(folder && existsSync(folder), `the temporary folder is named: ${server.stdout()}`);
      const about = await api(server.url, server.token!, '/storage/v2/about');
      assert.equal(about.status, 200);
      assert.equal(((await about.json()) as { kind: string }).kind, 'storage#about');
      const made = await api(server.url, server.token!, '/storage/v2/files', {
        method: 'POST',
        body: JSON.stringify({ title: 'from the cli test' }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(made.status, 200);
      assert.equal((await api(server.url, 'ya29.some-other-token', '/storage/v2/about')).status, 401);
      const ended = exited(server.child);
      server.child.kill('SIGTERM');
      assert.equal(await ended, 0, 'a clean stop, as gantry dev and the other servers alone');
      assert.equal(existsSync(folder), false, 'the temporary folder is gone');
      await assert.rejects(fetch(`${server.url}/storage/v2/about`), 'nothing listens any more');
    } finally {
      await stopGantry(server.child);
    }
  });

  it('STO-FILES-INSERT STO-FILES-LIST: --data-dir keeps the files across runs; STORAGE_TOKEN from the environment is used and not printed; --json; --session-ttl reaches the resumable sessions', async () => {
    const dir = path.join(scratch, 'kept');
    const first = await startStorage(['--port', '0', '--data-dir', dir]);
    let fileId: string;
    try {
      const made = await api(first.url, first.token!, '/storage/v2/files', {
        method: 'POST',
        body: JSON.stringify({ title: 'survives.txt' }),
        headers: { 'content-type': 'application/json' },
      });
      fileId = ((await made.json()) as { id: string }).id;
    } finally {
      await stopGantry(first.child);
    }
    assert.ok(existsSync(path.join(dir, 'state.json')), '--data-dir is kept');

    const { child, value } = await startGantry(
      ['--json', 'dev', 'storage', '--port', '0', '--data-dir', dir, '--session-ttl', '90'],
      (out) => {
        try {
          return JSON.parse(out) as { url: string; dataDir: string; temporary: boolean; tokenFrom: string; env: Record<string, string> };
        } catch {
          return undefined;
        }
      },
      { STORAGE_TOKEN: SECRET },
    );
    try {
      assert.equal(value.dataDir, dir);
      assert.equal(value.temporary, false);
      assert.equal(value.tokenFrom, 'STORAGE_TOKEN');
      assert.deepEqual(Object.keys(value.env), ['STORAGE_BASE_URL'], 'a token the user gave is not printed back');
      assert.ok(!JSON.stringify(value).includes(SECRET));
      const list = await api(value.url, SECRET, `/storage/v2/files?q=${encodeURIComponent("title = 'survives.txt'")}`);
      assert.deepEqual(
        ((await list.json()) as { items: { id: string }[] }).items.map((f) => f.id),
        [fileId],
        'the file of the first run',
      );
      const session = await api(value.url, SECRET, '/upload/storage/v2/files?uploadType=resumable', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json', 'x-upload-content-length': '10' },
      });
      assert.equal(session.status, 200);
      const before = Date.now();
      const { sessions } = (await (await fetch(`${value.url}/_gantry/sessions`)).json()) as { sessions: { expiresAt: string }[] };
      assert.equal(sessions.length, 1, JSON.stringify(sessions));
      const left = Date.parse(sessions[0]!.expiresAt) - before;
      assert.ok(left > 80_000 && left <= 90_000, `--session-ttl 90: the session ends in ${left} ms`);
    } finally {
      await stopGantry(child);
    }
  });

  it('--quota 1/60s --quota-status 429: the second request in the window is 429 rateLimitExceeded; --fault arms a fault at start', async () => {
    const server = await startStorage(
      ['--port', '0', '--quota', '1/60s', '--quota-status', '429', '--fault', '{"kind":"status","status":503,"times":1,"path":"/storage/v2/files"}'],
      { STORAGE_TOKEN: SECRET },
    );
    try {
      assert.equal(server.token, undefined, 'no STORAGE_TOKEN line for a token from the environment');
      assert.match(
        server.stdout(),
        new RegExp(`^export STORAGE_BASE_URL=${server.url.replace(/[.]/g, '\\.')}$`, 'm'),
        'the export line names the address only',
      );
      assert.doesNotMatch(server.stdout(), new RegExp(SECRET.replace(/\./g, '\\.')));
      assert.equal((await api(server.url, SECRET, '/storage/v2/about')).status, 200);
      const limited = await api(server.url, SECRET, '/storage/v2/about');
      assert.equal(limited.status, 429);
      const body = (await limited.json()) as { error: { errors: { reason: string; domain: string }[] } };
      assert.deepEqual([body.error.errors[0]!.reason, body.error.errors[0]!.domain], ['rateLimitExceeded', 'usageLimits']);
      const faults = (await (await fetch(`${server.url}/_gantry/faults`)).json()) as unknown;
      assert.match(JSON.stringify(faults), /"kind":"status","status":503/, 'the --fault is armed');
    } finally {
      await stopGantry(server.child);
    }
  });

  it('bad input is exit 2 with a message naming it, before anything listens — and a token is never taken from argv nor echoed', async () => {
    const notStorage = path.join(scratch, 'someone-elses');
    await mkdir(notStorage);
    await writeFile(path.join(notStorage, 'notes.txt'), 'mine');
    await mkdir(path.join(notStorage, 'uploads'));
    await writeFile(path.join(notStorage, 'uploads', 'precious.bin'), 'keep me');
    const aFile = path.join(scratch, 'a-file');
    await writeFile(aFile, 'x');
    const damaged = path.join(scratch, 'damaged');
    await mkdir(damaged);
    await writeFile(path.join(damaged, 'state.json'), '{"rootId": "r", "files": ');
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as { port: number }).port;
    try {
      const cases: [string[], Record<string, string>, RegExp][] = [
        [['--port', '70000'], {}, /^error: --port must be a whole number from 0 to 65535, got "70000"$/m],
        [['--port', String(taken)], {}, new RegExp(`^error: port ${taken} on 127\\.0\\.0\\.1 is in use \\(--port\\)$`, 'm')],
        [[], { GANTRY_DEV_STORAGE_PORT: String(taken) }, new RegExp(`^error: port ${taken} on 127\\.0\\.0\\.1 is in use \\(GANTRY_DEV_STORAGE_PORT\\)$`, 'm')],
        [[], { GANTRY_DEV_STORAGE_PORT: 'eighty' }, /^error: GANTRY_DEV_STORAGE_PORT must be a port number \(0-65535\), got "eighty"$/m],
        [['--host', '0.0.0.0'], {}, /^error: --host 0\.0\.0\.0 is not a loopback address/m],
        [['--host', 'example.com'], {}, /^error: --host example\.com is not a loopback address/m],
        [['--session-ttl', '0'], {}, /^error: --session-ttl must be whole seconds from 1 to 2592000 \(30 days\), got "0"$/m],
        [['--session-ttl', '1h'], {}, /^error: --session-ttl must be whole seconds/m],
        [['--quota', '5'], {}, /^error: --quota takes <requests>\/<window>, e\.g\. 100\/60s/m],
        [['--quota', '5/0s'], {}, /^error: --quota takes <requests>\/<window>/m],
        [['--quota-status', '500'], {}, /^error: --quota-status must be 403 or 429, got "500"$/m],
        [['--fault', '{"kind":"meteor"}'], {}, /^error: --fault \{"kind":"meteor"\}: a fault's kind is cut, status, quota or emptyPage$/m],
        [['--fault', 'not json'], {}, /^error: --fault not json: not JSON$/m],
        [['--data-dir', notStorage], {}, /^error: --data-dir \S+someone-elses holds other files and no state\.json: it is not a storage server's folder$/m],
        [['--data-dir', aFile], {}, /^error: the data folder \(--data-dir\) \S+a-file is a file, not a folder$/m],
        [
          ['--data-dir', damaged],
          {},
          /^error: \S+damaged\/state\.json is not JSON \(line 1, column \d+: expected .*\): the storage server's state is damaged$/m,
        ],
        [['--token', SECRET], {}, /^error: --token is not accepted: a token on the command line is visible to other users of this machine/m],
        [[], { STORAGE_TOKEN: 'short' }, /^error: STORAGE_TOKEN must be 8 to 4096 printable characters without spaces$/m],
        [
          ['--token-info-url', 'ftp://127.0.0.1/tokeninfo'],
          {},
          /^error: --token-info-url must be an http\(s\) URL without query, fragment or user, got "ftp:\/\/127\.0\.0\.1\/tokeninfo"$/m,
        ],
        [['--token-info-url', 'http://127.0.0.1:5762/tokeninfo?access_token=x'], {}, /^error: --token-info-url must be an http\(s\) URL without query/m],
      ];
      for (const [args, env, message] of cases) {
        // --port 0 unless the case is about the port: a case that wrongly started would not hold 5763.
        const result = await run(args.includes('--port') || env.GANTRY_DEV_STORAGE_PORT ? args : ['--port', '0', ...args], env);
        const what = `gantry dev storage ${args.join(' ')} ${JSON.stringify(env)}`;
        assert.equal(result.code, 2, `${what}: ${result.stderr}`);
        assert.match(result.stderr, message, what);
        assert.doesNotMatch(result.stderr, /\n\s+at /, `${what}: no stack`);
        assert.equal(result.stdout, '', `${what}: nothing started, nothing printed`);
        assert.ok(!result.stderr.includes(SECRET), `${what}: the token is not echoed`);
      }
      assert.ok(existsSync(path.join(notStorage, 'uploads', 'precious.bin')), "a folder that is not the server's is left alone");
    } finally {
      holder.close();
    }
  });

  it('its default port 5763 taken: it listens on a free port instead and says so on stderr, as gantry dev (exit 2 only for a port asked for)', async () => {
    const holder: Server = createServer();
    // Held by this test, or by something else already: either way 5763 is taken.
    await new Promise<void>((resolve, reject) => {
      holder.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve() : reject(error)));
      holder.listen(5763, '127.0.0.1', resolve);
    });
    const child = spawnGantry(['dev', 'storage']);
    try {
      let stdout = '';
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (c: Buffer) => {
          stdout += c.toString();
          if (/Press Ctrl-C to stop\.$/m.test(stdout)) resolve();
        });
        child.on('close', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
      });
      const url = /^STORAGE_BASE_URL=(http:\/\/127\.0\.0\.1:(\d+))$/m.exec(stdout);
      assert.ok(url && url[2] !== '5763', stdout);
      assert.match(stderr, new RegExp(`port 5763 is in use; the storage API listens on ${url[1]!.replace(/[.]/g, '\\.')} instead`), stderr);
      assert.match(stdout, new RegExp(`^export STORAGE_BASE_URL=${url[1]!.replace(/[.]/g, '\\.')} STORAGE_TOKEN=ya29\\.\\S+$`, 'm'));
    } finally {
      await stopGantry(child);
      holder.close();
    }
  });

  it('STO-BASE-PREFIX: gantry storage with STORAGE_BASE_URL at a path outside the API (…/foo) says the base URL does not look like a storage API (exit 1), an unknown id inside it says no such file', async () => {
    const server = await startStorage(['--port', '0']);
    try {
      const storage = (base: string, args: string[]) =>
        new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
          const child = spawnGantry(['storage', ...args], {
            STORAGE_BASE_URL: base,
            STORAGE_TOKEN: server.token!,
            XDG_STATE_HOME: path.join(scratch, 'state'),
            XDG_CONFIG_HOME: path.join(scratch, 'config'),
          });
          let stderr = '';
          child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stderr }));
        });
      const wrong = await storage(`${server.url}/foo`, ['ls']);
      assert.equal(wrong.code, 1, wrong.stderr);
      assert.match(wrong.stderr, /does not look like a storage API/, wrong.stderr);
      assert.doesNotMatch(wrong.stderr, /no such file/);
      assert.ok(!wrong.stderr.includes(server.token!), 'the token is not echoed');
      const unknown = await storage(server.url, ['trash', 'no-such-file-id']);
      assert.equal(unknown.code, 1, unknown.stderr);
      assert.match(unknown.stderr, /no such file/, unknown.stderr);
    } finally {
      await stopGantry(server.child);
    }
  });

  it('a reader gone from stdout: before the first byte it stops by itself, quietly (exit 0); after the first line, SIGTERM still ends it quietly', async () => {
    const gone = spawnGantry(['dev', 'storage', '--port', '0']);
    gone.stdout!.destroy();
    let stderr = '';
    gone.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => gone.kill('SIGKILL'), 30_000);
    const code = await exited(gone);
    clearTimeout(timer);
    assert.equal(code, 0, `it stopped as on Ctrl-C: ${stderr}`);
    assert.doesNotMatch(stderr, /EPIPE|ERR_STREAM_DESTROYED|Unhandled|\n\s+at /);

    // `| head -1`: the reader takes the first line and leaves.
    const child = spawnGantry(['dev', 'storage', '--port', '0']);
    let errors = '';
    child.stderr!.on('data', (c: Buffer) => (errors += c.toString()));
    const first = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
    });
    child.stdout!.destroy();
    assert.match(first, /^STORAGE_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/);
    const ended = exited(child);
    // As after `| head -1`: it may notice the reader gone and stop by itself; if not, one SIGTERM stops it.
    const term = setTimeout(() => child.kill('SIGTERM'), 3_000);
    const stoppedWith = await ended;
    clearTimeout(term);
    assert.equal(stoppedWith, 0, errors);
    assert.doesNotMatch(errors, /EPIPE|ERR_STREAM_DESTROYED|Unhandled|\n\s+at /);
  });

  it('--help describes it and loads no server code (the storage server, its store and routes load only when it runs)', async () => {
    const hooks = 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("LOADED " + r.url + "\\n"); return r; }';
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const main = fileURLToPath(new URL('../../lib/cli/main.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      ['--import', tsx, '--import', `data:text/javascript,${encodeURIComponent(register)}`, main, 'dev', 'storage', '--help'],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    assert.equal(await exited(child), 0, stderr);
    assert.match(stdout, /^Usage: gantry dev storage \[options\]/m);
    for (const flag of [
      '--port <port>',
      '--host <address>',
      '--data-dir <folder>',
      '--session-ttl <seconds>',
      '--quota <n\\/window>',
      '--quota-status <status>',
      '--fault <json>',
      '--token-info-url <url>',
    ])
      assert.match(stdout, new RegExp(flag), flag);
    assert.doesNotMatch(stdout, /--token </, 'no --token flag is offered');
    assert.match(stdout, /STORAGE_TOKEN from the environment/);
    const loaded = [...stderr.matchAll(/^LOADED (\S+)$/gm)].map((m) => m[1]!);
    assert.ok(
      loaded.some((url) => url.includes('/lib/cli/commands/dev/storage.ts')),
      `the hook saw the imports: ${loaded.length}`,
    );
    // The dev servers live in the top-level devserver/: of it, only the list, the port helper, the shared kit and each
    // server's starter may load. Checked against the real folder, so that a move makes this fail rather than pass.
    const devserver = new URL('../../devserver/', import.meta.url).href;
    assert.ok(existsSync(new URL('storage/server.ts', devserver)), `no storage server at ${devserver}`);
    assert.ok(
      loaded.includes(`${devserver}storage/starter.ts`),
      `the storage starter is not what loaded: ${loaded.filter((url) => url.includes('devserver')).join(', ')}`,
    );
    const heavy = loaded.filter((url) =>
      url.startsWith(devserver)
        ? !/^(?:index\.ts|port\.ts|dev-server\.ts|kit\/[\w-]+\.ts|\w+\/starter\.ts)$/.test(url.slice(devserver.length))
        : /\/node_modules\/(got|@aws-sdk|lighthouse|@pulumi)\//.test(url),
    );
    assert.deepEqual(heavy, []);
  });
});
