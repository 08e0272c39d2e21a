// The providers' operations share one way to read the engine's property bags (providers/inputs.ts) and one type,
// `Operations<typeof provider, Inputs, Outputs>` (providers/serialized.ts), derived from Pulumi's
// `ResourceProvider<Inputs, Outputs>` and the spec the provider was made with. The `@ts-expect-error` lines below are
// checked by `npm run typecheck`: each is an operations object the type must refuse.
import assert from 'node:assert/strict';
import * as pulumi from '@pulumi/pulumi';
import { changedInputs, knownFailures, pickInputs, sameValue } from '../../providers/inputs.js';
import { serializedProvider, type Operations } from '../../providers/serialized.js';

interface FakeInputs {
  name: string;
  size?: number;
  flag?: boolean;
  tags?: Record<string, string>;
}

interface FakeOutputs extends FakeInputs {
  createdAt: string;
}

const keys = ['name', 'size', 'flag', 'tags'] as const;

describe('LAYER-PROVIDERS: the operations read property bags one way', () => {
  it('LAYER-PROVIDERS: pickInputs takes the named keys as given, leaving out undefined ones, __provider and outputs', () => {
    const bag = { name: 'a', size: undefined, flag: null, tags: { b: '1' }, __provider: 'text', createdAt: 'then' };
    assert.deepEqual(pickInputs<FakeInputs>(bag, keys), { name: 'a', flag: null, tags: { b: '1' } });
    // Nothing is converted: a wrong type is Check's to refuse.
    assert.deepEqual(pickInputs<FakeInputs>({ name: 42 }, keys), { name: 42 });
  });

  it('LAYER-PROVIDERS: changedInputs compares deeply in any key order; undefined and null are absent; `absent` says what no value means', () => {
    const olds: FakeOutputs = { name: 'a', tags: { x: '1', y: '2' }, createdAt: 'then' };
    assert.deepEqual(changedInputs(olds, { name: 'a', tags: { y: '2', x: '1' } }, keys), []);
    assert.deepEqual(changedInputs(olds, { name: 'b', tags: { x: '1' } }, keys), ['name', 'tags']);
    assert.deepEqual(changedInputs(olds, { name: 'a', tags: { x: '1', y: '2' }, flag: false }, keys), ['flag']);
    assert.deepEqual(changedInputs(olds, { name: 'a', tags: { x: '1', y: '2' }, flag: false }, keys, { flag: false }), []);
    assert.deepEqual(changedInputs(olds, { name: 'a', tags: { x: '1', y: '2' }, flag: true }, keys, { flag: false }), ['flag']);
    // Outputs are not inputs: only the keys asked for are compared.
    const later: FakeOutputs = { ...olds, createdAt: 'now' };
    assert.deepEqual(changedInputs(later, { name: 'a', tags: { x: '1', y: '2' } }, keys), []);
    assert.equal(sameValue(undefined, null), true);
    assert.equal(sameValue([1, 2], [2, 1]), false);
    assert.equal(sameValue({ a: { b: 1 } }, { a: { b: '1' } }), false);
  });

  it('LAYER-PROVIDERS: knownFailures keeps a failure unless its property holds a value not known yet', () => {
    const inputs = { name: pulumi.runtime.unknownValue, tags: { x: pulumi.runtime.unknownValue }, size: -1 };
    const failures = [
      { property: 'name', reason: 'r' },
      { property: 'tags', reason: 'r' },
      { property: 'size', reason: 'r' },
      { property: 'flag', reason: 'r' },
    ];
    assert.deepEqual(
      knownFailures(inputs, failures).map((failure) => failure.property),
      ['size', 'flag'],
    );
  });
});

describe('LAYER-PROVIDERS: Operations<typeof provider, Inputs, Outputs> follows the provider’s spec', () => {
  const provider = serializedProvider('fakeOperations', {
    config: { address: 'gantry:fakeAddr' },
    withSettings: ['create'],
    withoutSettings: ['check', 'delete'],
  });
  type FakeOperations = Operations<typeof provider, FakeInputs, FakeOutputs>;

  const operations = {
    async check(_olds, news) {
      const inputs = pickInputs<FakeInputs>(news, keys);
      return { inputs, failures: typeof inputs.name === 'string' ? [] : [{ property: 'name', reason: 'name must be a string' }] };
    },
    async create(settings, inputs) {
      return { id: `${settings?.address ?? 'nowhere'}/${inputs.name}`, outs: { ...inputs, createdAt: 'now' } };
    },
    async delete(_id, _props) {},
  } satisfies FakeOperations;

  it('LAYER-PROVIDERS: the operations take the engine’s arguments, with Configure’s settings first where the spec says', async () => {
    assert.deepEqual(Object.keys(provider).sort(), ['check', 'configure', 'create', 'delete']);
    // The serialized methods pass the settings and then the engine's arguments: the arities the factory test checks.
    assert.deepEqual([operations.check.length, operations.create.length, operations.delete.length], [2, 2, 2]);
    assert.deepEqual(await operations.check({}, { name: 'a', __provider: 'text' }), { inputs: { name: 'a' }, failures: [] });
    assert.deepEqual(
      (await operations.check({}, { name: 1 })).failures.map((failure) => failure.property),
      ['name'],
    );
    assert.deepEqual(await operations.create({ address: 'here' }, { name: 'a' }), { id: 'here/a', outs: { name: 'a', createdAt: 'now' } });
    assert.equal((await operations.create(undefined, { name: 'a' })).id, 'nowhere/a');
  });

  it('LAYER-PROVIDERS: an operation the spec does not list, one missing, settings where none are passed or a settings key Configure does not keep are compile errors', () => {
    const { create, check } = operations;
    // prettier-ignore
    // @ts-expect-error update is in neither list: the serialized provider has no update to call it
    const _extra = { ...operations, async update() { return {}; } } satisfies FakeOperations;
    // prettier-ignore
    // @ts-expect-error create is listed: the provider needs it
    const _missing = { check, async delete() {} } satisfies FakeOperations;
    // prettier-ignore
    // @ts-expect-error delete is listed without settings: its first argument is the id
    const _settingsFirst = { check, create, async delete(_settings: { address?: string } | undefined, _id: string) {} } satisfies FakeOperations;
    // prettier-ignore
    // @ts-expect-error create is listed with settings: its first argument is them, not the inputs
    const _noSettings = { check, async create(inputs: FakeInputs) { return { id: inputs.name }; }, async delete() {} } satisfies FakeOperations;
    // prettier-ignore
    // @ts-expect-error Configure keeps `address` only
    const _typo = { check, async create(settings) { return { id: String(settings?.adress) }; }, async delete() {} } satisfies FakeOperations;
    assert.ok(_extra && _missing && _settingsFirst && _noSettings && _typo);
  });
});
