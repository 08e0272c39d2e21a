// CommitStatus through the engine harness (consumer mode: the packed gantry in a Pulumi project, the real
// dynamic-provider plugin), against the embedded platform API in this process: the statuses are read back from the
// server; the token is a canary searched for in the state, `__provider` and the log.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { expectDeploymentFailure, Harness, type Stack } from '../harness/index.js';
import { commitStatusOperations } from '../../providers/commit-status-operations.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'commit-status.cjs'), esm: path.join(programs, 'commit-status.mjs') };
const PROVIDER_LIMIT_BYTES = 16 * 1024;

describe('CommitStatus (Pulumi dynamic resource) through the engine harness', function () {
  this.timeout(300_000);
  let platform: PlatformServer;
  let token: string;
  let stack: Stack | undefined;
  const statuses = async (sha: string) => {
    const answer = await fetch(`${platform.url}/repos/gantry/demo/commits/${sha}/statuses`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(answer.status, 200);
    return (await answer.json()) as Array<{ id: number; state: string; context: string; description: string | null; target_url: string | null }>;
  };

  before(async () => {
    platform = await startPlatformServer();
    token = platform.issueToken({ kind: 'personal', token: `canary-platform-token-${Math.random().toString(36).slice(2)}`, login: 'deployer' });
  });
  afterEach(async () => {
    await stack?.dispose();
    stack = undefined;
  });
  after(async () => {
    await platform?.stop();
  });

  for (const [kind, sha] of [
    ['cjs', 'c'.repeat(40)],
    ['esm', 'e'.repeat(40)],
  ] as const) {
    it(`${kind} consumer: create posts one status; a change of state posts another; no change posts nothing; delete posts nothing; the token leaks nowhere`, async () => {
      stack = await Harness.consumer({ kind, env: { PLATFORM_API_URL: platform.url, GANTRY_PLATFORM_TOKEN: token } });
      const args = {
        repository: 'gantry/demo',
        sha,
        context: 'gantry/gate',
        state: 'pending',
        description: 'analysing',
        targetUrl: 'https://ci.example/runs/1',
      };

      const created = await stack.up(program, args);
      assert.deepEqual(created.plan, { status: 'create' });
      let seen = await statuses(sha);
      assert.equal(seen.length, 1, 'one status posted');
      assert.deepEqual(
        [seen[0]!.state, seen[0]!.context, seen[0]!.description, seen[0]!.target_url],
        ['pending', 'gantry/gate', 'analysing', 'https://ci.example/runs/1'],
      );
      assert.equal(created.resources.status!.id, String(seen[0]!.id), 'the resource id is the status id');
      assert.equal(created.outputs.statusId, seen[0]!.id);
      assert.ok(!Number.isNaN(Date.parse(String(created.outputs.createdAt))));
      assert.match(String(created.outputs.url), /\/repos\/gantry\/demo\/statuses\//);
      const provider = created.resources.status!.provider ?? '';
      assert.ok(provider.length > 0);
      assert.ok(Buffer.byteLength(provider) <= PROVIDER_LIMIT_BYTES, `__provider is ${Buffer.byteLength(provider)} bytes`);

      const same = await stack.up(program, args);
      assert.deepEqual(same.plan, { status: 'same' });
      assert.equal((await statuses(sha)).length, 1, 'no change posts nothing');

      const passed = await stack.up(program, { ...args, state: 'success', description: 'passed' });
      assert.deepEqual(passed.plan, { status: 'update' });
      seen = await statuses(sha);
      assert.deepEqual(
        seen.map((s) => s.state),
        ['success', 'pending'],
        'a new status, newest first',
      );
      assert.equal(passed.outputs.statusId, seen[0]!.id);
      assert.equal(passed.outputs.state, 'success');

      const refused = await expectDeploymentFailure(stack.up(program, { ...args, state: 'done' }));
      assert.match(refused.message, /state/);
      assert.match(refused.message, /state must be one of error, failure, pending, success/);
      assert.equal((await statuses(sha)).length, 2, 'a refused input posts nothing');

      const state = await readFile(stack.statePath, 'utf8');
      assert.ok(!state.includes(token), 'the token is not in the state');
      assert.ok(!provider.includes(token), 'the token is not in __provider');
      assert.ok(!stack.log.includes(token), 'the token is not in the log');

      const destroyed = await stack.destroy();
      assert.deepEqual(destroyed.plan, { status: 'delete' });
      assert.equal((await statuses(sha)).length, 2, 'a status cannot be deleted: delete posts nothing');
    });
  }

  it('Check names each bad property: state, description over 140, repository, sha', async () => {
    const { failures } = await commitStatusOperations.check(
      {},
      { repository: 'no-slash', sha: 'xyz', context: 'gantry/gate', state: 'done', description: 'x'.repeat(141), targetUrl: 'ftp://x/' },
    );
    assert.deepEqual(
      failures.map((f) => f.property),
      ['repository', 'sha', 'state', 'description', 'targetUrl'],
    );
    const fine = await commitStatusOperations.check({}, { repository: 'gantry/demo', sha: 'a'.repeat(40), context: 'c', state: 'success' });
    assert.deepEqual(fine.failures, []);
    // Diff's olds are the state's outputs: the status's own outputs are no input change.
    const olds = { ...fine.inputs, statusId: 1, url: 'u', createdAt: null };
    assert.equal((await commitStatusOperations.diff('1', olds, { ...fine.inputs })).changes, false);
    assert.equal((await commitStatusOperations.diff('1', olds, { ...fine.inputs, state: 'failure' })).changes, true);
  });
});
