import type { CommandGroup } from './context.js';

/**
 * Every command group by the one top-level command it registers, in the order `gantry --help` lists them. Each is
 * imported when a command line needs it (`groupsFor`): a start of `gantry storage …` loads the storage group alone,
 * not the modules of the other eleven. Heavy libraries are imported inside actions.
 */
const loaders: Record<string, () => Promise<CommandGroup>> = {
  dev: () => import('./commands/dev/index.js'),
  demo: () => import('./commands/demo/index.js'),
  modules: () => import('./commands/modules/index.js'),
  gate: () => import('./commands/gate/index.js'),
  browser: () => import('./commands/browser/index.js'),
  secrets: () => import('./commands/secrets/index.js'),
  platform: () => import('./commands/platform/index.js'),
  hooks: () => import('./commands/hooks/index.js'),
  auth: () => import('./commands/auth/index.js'),
  storage: () => import('./commands/storage/index.js'),
  mcp: () => import('./commands/mcp/index.js'),
  doctor: () => import('./commands/doctor/index.js'),
};

/** The names of the groups, in `--help` order. */
export const groupNames: readonly string[] = Object.keys(loaders);

/** The global flags that may stand before a group's name; any other option there may change what commander prints. */
const flagsBeforeGroup = new Set(['--json', '-v', '--verbose']);

/**
 * The groups a command line needs: the one it names when its first word (after the global flags) is a group's name,
 * else all of them — the program's help, its version, an unknown word (whose suggestion is picked among every group)
 * and any other option before the first word read the whole tree.
 */
export async function groupsFor(args: readonly string[]): Promise<CommandGroup[]> {
  const first = args.findIndex((arg) => !flagsBeforeGroup.has(arg));
  const word = first === -1 ? undefined : args[first]!;
  const names = word !== undefined && Object.hasOwn(loaders, word) ? [word] : groupNames;
  return Promise.all(names.map((name) => loaders[name]!()));
}
