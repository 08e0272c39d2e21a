/** Child process for the Ctrl-C test: starts a driver and a session, reports them on stdout, then waits to be interrupted. */
import { startChromeDriver } from '../../lib/automation/index.js';

const driver = await startChromeDriver();
const session = await driver.newSession();
process.stdout.write(`${JSON.stringify({ pid: driver.pid, browserPid: session.capabilities['goog:processID'], profilesDir: driver.profilesDir })}\n`);
setInterval(() => {}, 1_000);
