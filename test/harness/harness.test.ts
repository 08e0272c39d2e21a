// The engine harness proven on a test-only dynamic resource (fixtures/gantry-test-records) against
// a real record store on 127.0.0.1, through the real @pulumi/pulumi dynamic-provider plugin, in a
// CommonJS and in an ES-module consumer project.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  assertProviderHygiene,
  expectDeploymentFailure,
  Harness,
  PROVIDER_LIMIT_BYTES,
  SECRET_SIG,
  SIG_KEY,
  UNKNOWN,
  type ConsumerKind,
  type Stack,
} from './index.js';
import { MAX_VALUE_LENGTH, startRecordStore, type RecordStore } from '../peers/record-store.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const records = { cjs: path.join(programs, 'records.cjs'), esm: path.join(programs, 'records.mjs') };

interface RecordArgs {
  name: string;
  key: string;
  value: string;
  secret?: boolean;
  secretOutput?: boolean;
  capturing?: boolean;
  valueFrom?: string;
  deleteBeforeReplace?: boolean;
}
const program = (...list: RecordArgs[]) => ({ records: list });

/** The writes the store received since request number `from`, as `METHOD /path`. */
function writes(store: RecordStore, from: number): string[] {
  return store.requests
    .slice(from)
    .filter((r) => r.method !== 'GET')
    .map((r) => `${r.method} ${r.path}`);
}

for (const kind of ['cjs', 'esm'] as ConsumerKind[]) {
  describe(`engine harness, ${kind} consumer: a dynamic resource driven through the real plugin`, function () {
    this.timeout(180_000);
    let store: RecordStore;
    let stack: Stack | undefined;

    beforeEach(async () => {
      store = await startRecordStore();
    });
    afterEach(async () => {
      await stack?.dispose();
      stack = undefined;
      await store.stop();
    });

    const consumerWithEnvToken = async (): Promise<Stack> =>
      (stack = await Harness.consumer({ kind, env: { RECORDS_ADDR: store.url, RECORDS_TOKEN: store.token } }));

    it('create, no change, update, replace and delete each run the provider step the engine would, with secrets sealed in state', async () => {
      const s = await consumerWithEnvToken();
      const secretValue = `secret-${Date.now()}`;

      const created = await s.up(records, program({ name: 'a', key: 'alpha', value: secretValue, secret: true }, { name: 'b', key: 'beta', value: 'one' }));
      assert.deepEqual(created.plan, { a: 'create', b: 'create' });
      assert.match(created.log, /gantry-test-records: created record beta at version 1/, "the provider's output is captured");
      assert.deepEqual(store.records.get('alpha'), { key: 'alpha', value: secretValue, version: 1 });
      assert.equal(created.resources.b!.id, 'beta');
      assert.equal(created.resources.b!.urn, 'urn:pulumi:test::harness::pulumi-nodejs:dynamic/gantry-test:Record:Resource::b', 'URNs as the engine makes them');
      assert.deepEqual(created.outputs, { aValue: secretValue, aVersion: 1, bValue: 'one', bVersion: 1 });
      assert.deepEqual(created.secretOutputs, ['aValue'], 'a stack output built from a secret stays secret');
      assert.ok(created.resources.a!.secretOutputs.includes('value'), 'an output named like a secret input is marked secret');
      await assertProviderHygiene(s, created, [store.token]);
      const state = await readFile(s.statePath, 'utf8');
      assert.ok(!state.includes(secretValue), 'the secret value is not in the state file in plain text');
      assert.ok(state.includes(SIG_KEY) && state.includes(SECRET_SIG) && state.includes('ciphertext'), 'the state marks secret values');

      const unchanged = await s.up(records, program({ name: 'a', key: 'alpha', value: secretValue, secret: true }, { name: 'b', key: 'beta', value: 'one' }));
      assert.deepEqual(unchanged.plan, { a: 'same', b: 'same' });
      assert.equal(store.records.get('beta')!.version, 1, 'no write for an unchanged resource');

      const updated = await s.up(records, program({ name: 'a', key: 'alpha', value: secretValue, secret: true }, { name: 'b', key: 'beta', value: 'two' }));
      assert.deepEqual(updated.plan, { a: 'same', b: 'update' });
      assert.deepEqual(store.records.get('beta'), { key: 'beta', value: 'two', version: 2 });
      assert.equal(updated.outputs.bVersion, 2, 'the update outputs reach the program');

      const beforeReplace = store.requests.length;
      const replaced = await s.up(records, program({ name: 'a', key: 'alpha', value: secretValue, secret: true }, { name: 'b', key: 'gamma', value: 'two' }));
      assert.deepEqual(replaced.plan, { a: 'same', b: 'replace' });
      assert.deepEqual(writes(store, beforeReplace), ['PUT /records/gamma', 'DELETE /records/beta'], 'create before delete by default');
      assert.equal(store.records.has('beta'), false, 'the replaced record is deleted');
      assert.deepEqual(store.records.get('gamma'), { key: 'gamma', value: 'two', version: 1 });
      assert.equal(replaced.resources.b!.id, 'gamma');

      const removed = await s.up(records, program({ name: 'b', key: 'gamma', value: 'two' }));
      assert.deepEqual(removed.plan, { a: 'delete', b: 'same' });
      assert.equal(store.records.has('alpha'), false);
      assert.deepEqual(Object.keys(removed.resources), ['b']);

      const destroyed = await s.destroy();
      assert.deepEqual(destroyed.plan, { b: 'delete' });
      assert.equal(store.records.size, 0);
      assert.deepEqual(destroyed.resources, {});
    });

    it('preview reports create, update, replace, delete and same from Check and Diff alone, and changes nothing', async () => {
      const s = await consumerWithEnvToken();
      const applied = await s.up(
        records,
        program(
          { name: 'a', key: 'alpha', value: '1' },
          { name: 'b', key: 'beta', value: '1' },
          { name: 'c', key: 'gamma', value: '1' },
          { name: 'd', key: 'delta', value: '1' },
        ),
      );
      const requestsBefore = store.requests.length;
      const preview = await s.preview(
        records,
        program(
          { name: 'a', key: 'alpha', value: '1' },
          { name: 'b', key: 'beta', value: '2' },
          { name: 'c', key: 'gamma2', value: '1' },
          { name: 'e', key: 'epsilon', value: '1' },
        ),
      );
      assert.deepEqual(preview.plan, { a: 'same', b: 'update', c: 'replace', e: 'create', d: 'delete' });
      assert.deepEqual(store.requests.slice(requestsBefore), [], 'a preview sends nothing to the store');
      assert.deepEqual(preview.resources, applied.resources, 'a preview leaves the state as it was');
      assert.equal(preview.outputs.eVersion, UNKNOWN, "a new resource's computed outputs are unknown in a preview");
      assert.equal(preview.outputs.bVersion, UNKNOWN, "an updated resource's computed outputs are unknown in a preview");
      assert.equal(preview.outputs.aVersion, 1);
      assert.deepEqual((await s.up(records, program({ name: 'a', key: 'alpha', value: '1' }))).plan, { a: 'same', b: 'delete', c: 'delete', d: 'delete' });
    });

    it('a dependent resource gets the real outputs of the one it reads, follows its replacement, and is deleted first', async () => {
      const s = await consumerWithEnvToken();
      const first = await s.up(records, program({ name: 'a', key: 'alpha', value: 'x' }, { name: 'b', key: 'beta', value: '', valueFrom: 'a' }));
      assert.deepEqual(first.plan, { a: 'create', b: 'create' });
      assert.equal(store.records.get('beta')!.value, 'from alpha v1', 'b saw the version the store gave a (not an input echo)');

      const beforeReplace = store.requests.length;
      const second = await s.up(
        records,
        program({ name: 'a', key: 'gamma', value: 'x', deleteBeforeReplace: true }, { name: 'b', key: 'beta', value: '', valueFrom: 'a' }),
      );
      assert.deepEqual(second.plan, { a: 'replace', b: 'update' });
      assert.deepEqual(writes(store, beforeReplace), ['DELETE /records/alpha', 'PUT /records/gamma', 'PUT /records/beta'], 'deleteBeforeReplace honoured');
      assert.equal(store.records.get('beta')!.value, 'from gamma v1');
      assert.equal(store.records.has('alpha'), false);

      const beforeDestroy = store.requests.length;
      await s.destroy();
      assert.deepEqual(writes(store, beforeDestroy), ['DELETE /records/beta', 'DELETE /records/gamma'], 'the dependent first, also after a replacement');
    });

    it('refresh sees out-of-band drift and deletion; the next up converges the record again', async () => {
      const s = await consumerWithEnvToken();
      const desired = program({ name: 'a', key: 'alpha', value: 'wanted' });
      await s.up(records, desired);

      store.records.set('alpha', { key: 'alpha', value: 'changed by hand', version: 7 });
      const drifted = await s.refresh();
      assert.deepEqual(drifted.plan, { a: 'update' });
      assert.deepEqual(drifted.resources.a!.outputs, { key: 'alpha', value: 'changed by hand', version: 7, __provider: drifted.resources.a!.provider });

      const restored = await s.up(records, desired);
      assert.deepEqual(restored.plan, { a: 'update' });
      assert.deepEqual(store.records.get('alpha'), { key: 'alpha', value: 'wanted', version: 8 });

      const quiet = await s.refresh();
      assert.deepEqual(quiet.plan, { a: 'same' });

      store.records.delete('alpha');
      const gone = await s.refresh();
      assert.deepEqual(gone.plan, { a: 'delete' });
      assert.deepEqual(gone.resources, {});

      const recreated = await s.up(records, desired);
      assert.deepEqual(recreated.plan, { a: 'create' });
      assert.deepEqual(store.records.get('alpha'), { key: 'alpha', value: 'wanted', version: 1 });
    });

    it('a Check failure stops the deployment with the property and the reason, and nothing reaches the store', async () => {
      const s = await consumerWithEnvToken();
      const failure = await expectDeploymentFailure(s.up(records, program({ name: 'bad', key: 'Not_A_Key', value: 'x' })));
      assert.match(failure.message, /gantry-test:Record:Resource resource 'bad': check failed: property key: key must match .* got "Not_A_Key"/);
      assert.equal(failure.result.errors.length, 1, `one error, got ${failure.result.errors.join(' | ')}`);
      assert.equal(store.requests.length, 0);
      assert.deepEqual(failure.result.resources, {});
    });

    it('a provider exception reaches the test with its message; the token is in neither the message nor the logs', async () => {
      const s = await consumerWithEnvToken();
      await s.up(records, program({ name: 'a', key: 'alpha', value: 'fine' }));
      const tooLong = 'x'.repeat(MAX_VALUE_LENGTH + 1);
      const failure = await expectDeploymentFailure(
        s.up(records, program({ name: 'a', key: 'alpha', value: 'fine' }, { name: 'b', key: 'beta', value: tooLong })),
      );
      assert.match(failure.message, new RegExp(`resource 'b': record store refused PUT /records/beta: 422 value is ${MAX_VALUE_LENGTH + 1} characters`));
      assert.equal(failure.result.plan.a, 'same');
      assert.equal(store.records.has('beta'), false);
      assert.ok(!failure.message.includes(store.token) && !s.log.includes(store.token));
      // A failed deployment deletes nothing: `a` is still there and still in state.
      assert.ok(store.records.has('alpha'));
      assert.ok(failure.result.resources.a);
    });

    it('__provider stays under 16 KB and holds no credential when the token comes from Configure (secret config); additionalSecretOutputs seal an output', async () => {
      const canary = `canary-${kind}-${Math.random().toString(36).slice(2)}`;
      await store.stop();
      store = await startRecordStore({ token: canary });
      const s = (stack = await Harness.consumer({ kind, config: { 'records:address': store.url, 'records:token': { secret: canary } } }));

      const plainInput = `plain-input-${Math.random().toString(36).slice(2)}`;
      const result = await s.up(records, program({ name: 'a', key: 'alpha', value: plainInput, secretOutput: true }));
      assert.deepEqual(result.plan, { a: 'create' });
      assert.deepEqual(result.resources.a!.secretOutputs, ['value'], 'additionalSecretOutputs marks the output secret');
      assert.equal(store.requests.at(-1)!.authorization, `Bearer ${canary}`, 'the provider got the token through Configure');
      const bytes = Buffer.byteLength(result.resources.a!.provider!);
      assert.ok(bytes > 1000 && bytes <= PROVIDER_LIMIT_BYTES, `__provider is ${bytes} bytes`);
      // Size, and the canary in neither __provider, the state file, the logs nor an error.
      await assertProviderHygiene(s, result, [canary]);
      const state = await readFile(s.statePath, 'utf8');
      assert.equal(state.split(plainInput).length - 1, 1, 'the value is plain in the inputs only, sealed in the outputs');
      await s.destroy();
      assert.equal(store.records.size, 0);
    });
  });
}

describe('engine harness: program failures', function () {
  this.timeout(120_000);
  it('an exception thrown by the program reaches the test with its message, and nothing is deleted', async () => {
    const store = await startRecordStore();
    const stack = await Harness.consumer({ kind: 'cjs', env: { RECORDS_ADDR: store.url, RECORDS_TOKEN: store.token } });
    try {
      await stack.up(records, program({ name: 'kept', key: 'kept', value: 'v' }));
      const failure = await expectDeploymentFailure(stack.up(path.join(programs, 'throws.cjs')));
      assert.match(failure.message, /the program refuses to continue: invented failure for the test/);
      assert.equal(store.records.has('kept'), true, 'a failed program deletes nothing it did not declare');
      assert.ok(failure.result.resources.kept);
      await stack.destroy();
      assert.equal(store.records.size, 0, 'destroy removes what the failed run created too');
    } finally {
      await stack.dispose();
      await store.stop();
    }
  });
});

describe('engine harness: the __provider check notices a provider that captures a credential', function () {
  this.timeout(120_000);
  it('a provider built around a token read in the program carries it in __provider (the anti-pattern the pattern avoids)', async () => {
    const canary = `canary-captured-${Math.random().toString(36).slice(2)}`;
    const store = await startRecordStore({ token: canary });
    const stack = await Harness.consumer({ kind: 'cjs', env: { RECORDS_ADDR: store.url, RECORDS_TOKEN: canary } });
    try {
      const result = await stack.up(records, program({ name: 'leaky', key: 'leaky', value: 'v', capturing: true }));
      assert.ok(result.resources.leaky!.provider!.includes(canary));
      assert.ok((await readFile(stack.statePath, 'utf8')).includes(canary));
      await assert.rejects(assertProviderHygiene(stack, result, [canary]), /a credential is captured in __provider/);
      await stack.destroy();
    } finally {
      await stack.dispose();
      await store.stop();
    }
  });
});
