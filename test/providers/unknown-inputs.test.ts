// Each gantry resource previewed with its address-like input not known yet, as `pulumi preview` (and `pulumi up`
// before a dependency exists) sends it: the engine hands Check the unknown placeholder for a value built from an
// output of a resource created in the same run. Check must accept it (the real value is checked when known) and
// the preview must plan a create; a known bad value in the same place is still refused, so the acceptance is
// not a Check that never looks. Through the engine harness in consumer projects; nothing is created.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectDeploymentFailure, Harness, UNKNOWN, type ConsumerKind, type Stack } from '../harness/index.js';

const programs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'programs');
const program = { cjs: path.join(programs, 'unknown-inputs.cjs'), esm: path.join(programs, 'unknown-inputs.mjs') };

interface Case {
  resource: 'KvSecret' | 'RegistryModule' | 'PageAnalysisGate' | 'BrowserCheck';
  kind: ConsumerKind;
  property: string;
  /** The value once known: `{version}` is the upstream record's version. */
  template: string;
  /** A known value Check refuses, with what the refusal says. */
  bad: string;
  refusal: RegExp;
  args: Record<string, unknown>;
}

const cases: Case[] = [
  {
    resource: 'KvSecret',
    kind: 'cjs',
    property: 'path',
    template: 'apps/release-{version}',
    bad: 'apps/../../sys/raw',
    refusal: /\.\./,
    args: { mount: 'secret', data: { key: 'value' } },
  },
  {
    resource: 'RegistryModule',
    kind: 'esm',
    property: 'source',
    template: 'registry.example.test/acme/net-{version}/aws',
    bad: 'acme/network/AWS',
    refusal: /provider "AWS"/,
    args: { version: '~> 1.0' },
  },
  {
    resource: 'PageAnalysisGate',
    kind: 'cjs',
    property: 'url',
    template: 'https://site-{version}.example.test/',
    bad: 'ftp://example.test/',
    refusal: /only http and https pages/,
    args: { thresholds: { performance: 0.9 } },
  },
  {
    resource: 'BrowserCheck',
    kind: 'esm',
    property: 'url',
    template: 'https://site-{version}.example.test/',
    bad: 'ftp://example.test/',
    refusal: /ftp/,
    args: { title: 'Home' },
  },
];

describe('preview with unknown inputs: each provider’s Check accepts a value not known yet (engine harness, consumer mode)', function () {
  this.timeout(300_000);
  const stacks = new Map<ConsumerKind, Stack>();
  const consumer = async (kind: ConsumerKind): Promise<Stack> => {
    if (!stacks.has(kind)) stacks.set(kind, await Harness.consumer({ kind }));
    return stacks.get(kind)!;
  };
  after(async () => {
    for (const stack of stacks.values()) await stack.dispose();
  });

  for (const { resource, kind, property, template, bad, refusal, args } of cases) {
    it(`${resource} (${kind}): an unknown ${property} reaches Check as the placeholder and the preview plans a create; a known bad ${property} is refused`, async () => {
      const stack = await consumer(kind);
      const preview = await stack.preview(program, { resource, property, template, args });
      assert.deepEqual(preview.plan, { upstream: 'create', subject: 'create' });
      assert.deepEqual(preview.errors, []);
      const subject = preview.steps.find((step) => step.name === 'subject')!;
      assert.equal(subject.inputs?.[property], UNKNOWN, `Check saw and kept the unknown ${property}`);
      assert.equal(preview.outputs.subjectId, UNKNOWN, 'the id of a resource still to be created is unknown');
      assert.deepEqual(preview.resources, {}, 'a preview creates nothing');

      const refused = await expectDeploymentFailure(stack.preview(program, { resource, property, template, args, bad }));
      assert.match(refused.message, new RegExp(`resource 'subject': check failed: property ${property}: `));
      assert.match(refused.message, refusal);
    });
  }
});
