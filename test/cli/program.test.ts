import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { CheckFailedError, GantryError, UsageError } from '../../lib/errors.js';
import { buildProgram, gantryErrorBehind } from '../../lib/cli/program.js';
import { groupNames, groupsFor } from '../../lib/cli/groups.js';
import { createOutput } from '../../lib/cli/output.js';
import { createLogger } from '../../lib/log.js';

const bin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; bin: Record<string, string> };

function gantry(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, GANTRY_LOG: 'warn' }, timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The modules `gantry <args>` imports, as a resolve hook sees them (CommonJS packages through their entry point). */
function loadedBy(...args: string[]): string[] {
  const hooks = 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("LOADED " + r.url + "\\n"); return r; }';
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, bin, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  return [...result.stderr.matchAll(/^LOADED (\S+)$/gm)].map((match) => match[1]!);
}

describe('the gantry command (built, as npx runs it)', () => {
  it("is the package's bin", () => {
    assert.equal(pkg.bin.gantry, 'dist/lib/cli/main.js');
    assert.match(readFileSync(bin, 'utf8'), /^#!\/usr\/bin\/env node/);
  });

  it('--help lists every command group and the global flags', () => {
    const { code, stdout } = gantry('--help');
    assert.equal(code, 0);
    for (const group of ['dev', 'demo', 'modules', 'gate', 'browser', 'secrets', 'platform', 'doctor']) assert.match(stdout, new RegExp(`^  ${group}\\b`, 'm'));
    assert.match(stdout, /--json/);
    assert.match(stdout, /--verbose/);
  });

  it('--help loads no library a command needs only when it runs (dev servers, AWS SDK, got, hpagent, semver, tar, Lighthouse)', () => {
    const loaded = loadedBy('--help');
    assert.ok(
      loaded.some((url) => url.includes('/node_modules/commander/')),
      `the hook saw the imports: ${loaded.join(' ')}`,
    );
    const heavy = loaded.filter((url) =>
      /\/node_modules\/(@aws-sdk|@smithy|got|hpagent|undici|semver|tar|yauzl|lighthouse|chrome-launcher|@pulumi)\/|\/dist\/lib\/(devserver\/\w+\/server|registry|sources|secrets|analysis|automation|platform)\b/.test(
        url,
      ),
    );
    assert.deepEqual(heavy, []);
  });

  it('a remote failure is one error line and a hint on stderr, exit 3; --verbose adds the stack', () => {
    const env = { SECRETS_ADDR: 'http://127.0.0.1:1', SECRETS_TOKEN: 'canary-token-program-test', SECRETS_MAX_RETRIES: '0' };
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, GANTRY_LOG: 'warn', ...env }, timeout: 60_000 });
    const plain = run('secrets', 'get', 'secret/app');
    assert.equal(plain.status, 3);
    assert.equal(plain.stdout, '');
    const lines = plain.stderr.trim().split('\n');
    assert.equal(lines.length, 2, plain.stderr);
    assert.match(lines[0]!, /^error: could not complete GET .* ECONNREFUSED/);
    assert.match(lines[1]!, /^hint: Check the address \(SECRETS_ADDR, or --address in gantry secrets\)/);
    const verbose = run('--verbose', 'secrets', 'get', 'secret/app');
    assert.equal(verbose.status, 3);
    assert.match(verbose.stderr, /^error: could not complete GET/m);
    assert.match(verbose.stderr, /^\s+at .*secrets/m, 'the stack with --verbose');
    for (const output of [plain.stderr, verbose.stderr]) assert.ok(!output.includes(env.SECRETS_TOKEN));
  });

  it('--version prints the package version', () => {
    const { code, stdout } = gantry('--version');
    assert.equal(code, 0);
    assert.equal(stdout.trim(), pkg.version);
  });

  it('a usage error exits 2 with a hint on stderr and nothing on stdout', () => {
    const { code, stdout, stderr } = gantry('no-such-group');
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /unknown command 'no-such-group'/);
    assert.match(stderr, /--help/);
  });

  it('an unknown flag exits 2', () => {
    const { code, stderr } = gantry('demo', '--no-such-flag');
    assert.equal(code, 2);
    assert.match(stderr, /unknown option/);
  });

  it('no arguments prints the help and exits 2', () => {
    const { code, stdout } = gantry();
    assert.equal(code, 2);
    assert.match(stdout, /Usage: gantry/);
  });
});

describe('the groups a command line loads', () => {
  const context = { out: createOutput(), logger: createLogger(), globals: () => ({ json: false, verbose: false }) };
  const registered = (program: Command) => program.commands.map((c) => c.name()).filter((name) => name !== 'help');

  it('each group registers the one command its name says, and every group in --help order', async () => {
    for (const name of groupNames) {
      const program = new Command();
      for (const group of await groupsFor([name])) group.register(program, context);
      assert.deepEqual(registered(program), [name]);
    }
    assert.deepEqual(registered(buildProgram(context, { groups: await groupsFor([]) })), [...groupNames]);
    assert.equal(groupNames.length, 12);
  });

  it('the group named first, after --json and --verbose, alone; every group for help, the version, an unknown word or another option first', async () => {
    for (const args of [['storage'], ['storage', 'ls', '--json'], ['--json', 'storage'], ['-v', '--verbose', 'storage', 'modules']])
      assert.deepEqual(registered(buildProgram(context, { groups: await groupsFor(args) })), ['storage'], args.join(' '));
    for (const args of [
      [],
      ['--json'],
      ['--help', 'storage'],
      ['-V'],
      ['help', 'storage'],
      ['storag'],
      ['constructor'],
      ['--nosuch', 'storage'],
      ['--', 'storage'],
    ])
      assert.deepEqual(registered(buildProgram(context, { groups: await groupsFor(args) })), [...groupNames], args.join(' '));
  });

  it('`gantry storage --help` loads the storage group and none of the other eleven; `gantry --help` loads all twelve', () => {
    const groupsIn = (urls: string[]) => new Set(urls.map((url) => /\/dist\/lib\/cli\/commands\/(\w+)\//.exec(url)?.[1]).filter(Boolean));
    assert.deepEqual([...groupsIn(loadedBy('storage', '--help'))], ['storage']);
    assert.deepEqual([...groupsIn(loadedBy('--help'))].sort(), [...groupNames].sort());
  });
});

describe('exit codes of wrapped errors', () => {
  it('come from the GantryError in the cause chain or, for an aggregate, the most serious member', () => {
    const check = new CheckFailedError('hash mismatch');
    assert.equal(gantryErrorBehind(new Error('bucket: hash mismatch', { cause: check })), check);
    const remote = new GantryError('registry down', { exitCode: 3 });
    assert.equal(gantryErrorBehind(new AggregateError([check, new UsageError('bad address'), remote, new Error('plain')])), remote);
    assert.equal(gantryErrorBehind(new Error('plain')), undefined);
  });
});
