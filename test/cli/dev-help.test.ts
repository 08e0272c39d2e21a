// `gantry dev --help` claims only the subcommands that exist: the servers started alone are those listed under
// Commands, and a server without one (pageanalysis) is not said to have one.
import assert from 'node:assert/strict';
import { devServers } from '../../devserver/index.js';
import { gantry } from '../analysis/gantry.js';

describe('gantry dev --help', function () {
  this.timeout(60_000);

  it('lists every server, and as started alone exactly the subcommands it registers', async () => {
    const run = await gantry(['dev', '--help']);
    assert.equal(run.code, 0, run.stderr);
    const commands = [...run.stdout.split(/^Commands:$/m)[1].matchAll(/^ {2}([a-z-]+)\b/gm)].map((m) => m[1]).filter((name) => name !== 'help');
    assert.ok(commands.length > 0, run.stdout);
    assert.match(run.stdout, new RegExp(`^Servers: ${devServers.map((s) => s.name).join(', ')}\\.`, 'm'));
    const alone = /Started alone, with their own options: ([^\n]+)\.$/m.exec(run.stdout);
    assert.ok(alone, run.stdout);
    assert.deepEqual(
      alone[1].split(', '),
      commands.map((name) => `gantry dev ${name}`),
    );
    assert.doesNotMatch(run.stdout, /[Ee]ach also has a subcommand/);
  });
});
