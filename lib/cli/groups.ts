import type { CommandGroup } from './context.js';
import * as auth from './auth.js';
import * as dev from './dev.js';
import * as demo from './demo.js';
import * as doctor from './doctor.js';
import * as browser from './browser.js';
import * as gate from './gate.js';
import * as hooks from './hooks.js';
import * as mcp from './mcp.js';
import * as modules from './modules.js';
import * as platform from './platform.js';
import * as secrets from './secrets.js';
import * as storage from './storage.js';

/** Every command group, in the order `gantry --help` lists them. Heavy libraries are imported inside actions. */
export const groups: CommandGroup[] = [dev, demo, modules, gate, browser, secrets, platform, hooks, auth, storage, mcp, doctor];
