/**
 * Tools for the context server the client tests call (`startContextServer({ tools })` of lib/mcp/server). They carry
 * the names of Gantry's own tools because the server takes each call's required scope from its tool catalogue by
 * name: `modules_resolve` needs modules:read (granted at first sign-in), `gate_run` gates:run (a step-up),
 * `platform_rate_limit` platform:read (which the test authorization server never grants: a second 403). Their work is
 * the test's: an echo, progress notifications, an error result.
 */
import { z } from 'zod';
import { ToolRefusal, type ToolDefinition } from '../../../lib/mcp/server/index.js';

const define = <Shape extends z.ZodRawShape>(tool: ToolDefinition<Shape>) => tool as unknown as ToolDefinition;

export const testTools: ToolDefinition[] = [
  define({
    name: 'modules_resolve',
    title: 'Echo',
    description: 'Echoes its text.',
    scope: 'modules:read',
    readOnly: true,
    input: { source: z.string() },
    async run({ source }) {
      if (source === 'fail') throw new ToolRefusal('no such module: fail');
      return { echoed: source };
    },
  }),
  define({
    name: 'gate_run',
    title: 'Slow',
    description: 'Reports progress three times, then answers.',
    scope: 'gates:run',
    readOnly: false,
    input: { url: z.string() },
    async run({ url }, context) {
      for (let i = 1; i <= 3; i += 1) {
        await context.progress(i, 3, `step ${i} of 3`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { gated: url };
    },
  }),
  define({
    name: 'platform_rate_limit',
    title: 'Never',
    description: 'Needs a scope nobody is granted.',
    scope: 'platform:read',
    readOnly: true,
    input: {},
    async run() {
      return { never: true };
    },
  }),
];
