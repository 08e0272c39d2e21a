// The engine harness: runs Pulumi programs and their dynamic providers in consumer projects through
// the real @pulumi/pulumi dynamic-provider plugin. How to use it: docs/architecture.md, "Tests:
// peers and the engine harness".
import { Stack, type StackOptions } from './stack.js';

export { DeploymentError, expectDeploymentFailure, Stack } from './stack.js';
export type { Op, OperationResult, Program, ResourceView, StackOptions, Step } from './stack.js';
export { ProviderCallError } from './plugin.js';
export { packOnce, type ConsumerKind } from './consumer.js';
export { SIG_KEY, SECRET_SIG, UNKNOWN } from './secrets.js';
export { assertProviderHygiene, PROVIDER_LIMIT_BYTES } from './hygiene.js';

export const Harness = {
  /** A stack in a fresh consumer project (CommonJS unless `kind: 'esm'`) with the packed gantry installed. */
  consumer(options: StackOptions = {}): Promise<Stack> {
    return Stack.create(options);
  },
};
