// What the resource classes and operations share (providers/resource.ts, providers/run-on-change.ts,
// providers/inputs.ts): the operations of a resource that runs at create and on every change, the check of
// `triggers`, and the types a resource's Args and outputs follow from. The `@ts-expect-error` lines are checked by
// `npm run typecheck`.
import assert from 'node:assert/strict';
import * as pulumi from '@pulumi/pulumi';
import { triggersProblems } from '../../providers/inputs.js';
import type { ArgsOf, OutputsOf, ResourceShape } from '../../providers/resource.js';
import { runOnChangeOperations } from '../../providers/run-on-change.js';

interface ProbeInputs {
  url: string;
  runs?: number;
  triggers?: Record<string, string>;
}

interface ProbeOutputs extends ProbeInputs {
  score: number;
}

const keys = ['url', 'runs', 'triggers'] as const;

describe('LAYER-PROVIDERS: runOnChangeOperations', () => {
  const runs: Array<{ settings: unknown; inputs: ProbeInputs }> = [];
  const operations = runOnChangeOperations({
    keys,
    problems: (inputs: ProbeInputs) => [
      ...(typeof inputs.url === 'string' ? [] : [{ property: 'url', reason: 'url must be a string' }]),
      ...triggersProblems(inputs.triggers),
    ],
    async run(settings: { region?: string } | undefined, inputs: ProbeInputs): Promise<ProbeOutputs> {
      runs.push({ settings, inputs });
      if (inputs.url === 'https://failing.example.test/') throw new Error('below the threshold');
      return { ...inputs, score: runs.length };
    },
    idOf: (outs) => `probe-${outs.score}`,
  });
  beforeEach(() => (runs.length = 0));

  it('LAYER-PROVIDERS: check picks the input keys and reports their problems, but those of a value not known yet', async () => {
    const given = { url: 'https://site.example.test/', triggers: { version: '1' }, extra: 'x', __provider: 'text' };
    assert.deepEqual(await operations.check({}, given), { inputs: { url: 'https://site.example.test/', triggers: { version: '1' } }, failures: [] });
    const wrong = await operations.check({}, { url: 42, triggers: ['1'] });
    assert.deepEqual(
      wrong.failures.map((failure) => failure.property),
      ['url', 'triggers'],
    );
    const later = await operations.check({}, { url: pulumi.runtime.unknownValue, triggers: { version: pulumi.runtime.unknownValue } });
    assert.deepEqual(later.failures, []);
  });

  it('LAYER-PROVIDERS: diff answers "changed" for any input changed (never a replace), not for an output', async () => {
    const olds: ProbeOutputs = { url: 'https://site.example.test/', triggers: { version: '1' }, score: 1 };
    assert.deepEqual(await operations.diff('probe-1', olds, { url: olds.url, triggers: { version: '1' } }), {
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
    assert.equal((await operations.diff('probe-1', olds, { url: olds.url, triggers: { version: '2' } })).changes, true);
    assert.equal((await operations.diff('probe-1', olds, { url: olds.url, triggers: { version: '1' }, runs: 3 })).changes, true);
  });

  it('LAYER-PROVIDERS: create and update run with the settings and the input keys only; read keeps the recorded result; a failing run fails the operation', async () => {
    const engineInputs = { url: 'https://site.example.test/', __provider: 'serialized text' } as ProbeInputs;
    const created = await operations.create({ region: 'eu' }, engineInputs);
    assert.deepEqual(created, { id: 'probe-1', outs: { url: 'https://site.example.test/', score: 1 } });
    assert.deepEqual(runs[0], { settings: { region: 'eu' }, inputs: { url: 'https://site.example.test/' } });
    const updated = await operations.update(undefined, created.id, created.outs, { ...engineInputs, runs: 2 });
    assert.deepEqual(updated, { outs: { url: 'https://site.example.test/', runs: 2, score: 2 } });
    assert.deepEqual(await operations.read(created.id, updated.outs), { id: created.id, props: updated.outs });
    assert.equal(runs.length, 2, 'read does not run again');
    await assert.rejects(operations.update(undefined, created.id, updated.outs, { url: 'https://failing.example.test/' }), /below the threshold/);
  });
});

describe('LAYER-PROVIDERS: triggersProblems', () => {
  it('LAYER-PROVIDERS: absent, or names mapped to strings; anything else is one failure of `triggers`', () => {
    assert.deepEqual(triggersProblems(undefined), []);
    assert.deepEqual(triggersProblems({}), []);
    assert.deepEqual(triggersProblems({ version: '1.2.3' }), []);
    for (const wrong of [null, 'v1', ['v1'], { version: 1 }, { version: { nested: 'x' } }]) {
      assert.deepEqual(triggersProblems(wrong), [{ property: 'triggers', reason: 'triggers must map names to text values' }], JSON.stringify(wrong));
    }
  });
});

describe('LAYER-PROVIDERS: a resource’s Args and outputs follow from its Inputs and Outputs (types)', () => {
  it('LAYER-PROVIDERS: ArgsOf takes an Input for each value and each entry; OutputsOf gives every output; a shape names only real keys', () => {
    const args: ArgsOf<ProbeInputs> = { url: pulumi.output('https://site.example.test/'), triggers: { version: pulumi.output('1') } };
    // @ts-expect-error -- a required input left out
    const missing: ArgsOf<ProbeInputs> = { runs: 1 };
    // @ts-expect-error -- an entry of the wrong type
    const wrongEntry: ArgsOf<ProbeInputs> = { url: 'u', triggers: { version: 1 } };
    type Probe = OutputsOf<ProbeOutputs>;
    const score: keyof Probe = 'score';
    const shape: ResourceShape<ArgsOf<ProbeInputs>, ProbeOutputs> = { type: 'gantry:test:Probe', inputs: keys, outputs: ['score'] };
    // @ts-expect-error -- an input is not an output the provider sets
    const inputAsOutput: ResourceShape<ArgsOf<ProbeInputs>, ProbeOutputs> = { type: 'gantry:test:Probe', inputs: keys, outputs: ['url'] };
    // @ts-expect-error -- no such input
    const unknownInput: ResourceShape<ArgsOf<ProbeInputs>, ProbeOutputs> = { type: 'gantry:test:Probe', inputs: ['size'], outputs: [] };
    assert.ok(args && missing && wrongEntry && score && shape && inputAsOutput && unknownInput);
  });
});
