import type { CommandGroup } from './context.js';
import * as auth from './commands/auth/index.js';
import * as dev from './commands/dev/index.js';
import * as demo from './commands/demo/index.js';
import * as doctor from './commands/doctor/index.js';
import * as browser from './commands/browser/index.js';
import * as gate from './commands/gate/index.js';
import * as hooks from './commands/hooks/index.js';
import * as mcp from './commands/mcp/index.js';
import * as modules from './commands/modules/index.js';
import * as platform from './commands/platform/index.js';
import * as secrets from './commands/secrets/index.js';
import * as storage from './commands/storage/index.js';

/** Every command group, in the order `gantry --help` lists them. Heavy libraries are imported inside actions. */
export const groups: CommandGroup[] = [dev, demo, modules, gate, browser, secrets, platform, hooks, auth, storage, mcp, doctor];
