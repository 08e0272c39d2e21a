// The provider rule of docs/architecture.md as one assertion for provider tests: every serialized
// provider is at most 16 KB and no credential appears in it, in the state file, in anything the
// program or provider printed, or in an error message.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { OperationResult, Stack } from './stack.js';

export const PROVIDER_LIMIT_BYTES = 16 * 1024;

export async function assertProviderHygiene(stack: Stack, result: OperationResult, canaries: string[]): Promise<void> {
  assert.ok(canaries.length > 0 && canaries.every((c) => c.length >= 8), 'give canaries of at least 8 characters');
  const state = await readFile(stack.statePath, 'utf8');
  const providers = Object.values(result.resources).filter((r) => r.provider !== undefined);
  assert.ok(providers.length > 0, 'the operation left no dynamic resource to inspect');
  for (const resource of providers) {
    const bytes = Buffer.byteLength(resource.provider!);
    assert.ok(bytes <= PROVIDER_LIMIT_BYTES, `${resource.urn}: __provider is ${bytes} bytes, over ${PROVIDER_LIMIT_BYTES}`);
  }
  for (const canary of canaries) {
    for (const resource of providers) {
      assert.ok(!resource.provider!.includes(canary), `${resource.urn}: a credential is captured in __provider`);
    }
    assert.ok(!state.includes(canary), 'a credential is in the state file');
    assert.ok(!stack.log.includes(canary), 'a credential is in what the program or provider printed');
    assert.ok(!result.errors.some((e) => e.includes(canary)), 'a credential is in an error message');
  }
}
