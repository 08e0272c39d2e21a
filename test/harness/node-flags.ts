// The node flags of the processes the harness starts per operation, the plugin and the program host: see
// defer-pulumi-deps.cjs for what they change and why.
import { fileURLToPath } from 'node:url';

export const harnessNodeArgs = ['--require', fileURLToPath(new URL('./defer-pulumi-deps.cjs', import.meta.url))];
