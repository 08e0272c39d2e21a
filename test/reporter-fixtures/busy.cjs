// A fixture for test/reporter.test.ts (not matched by the test glob): a file whose child process spends at least 400 ms
// of CPU (its own count, however busy the machine), reaped before the file ends.
const { spawnSync } = require('node:child_process');

describe('busy', function () {
  this.timeout(60_000);
  it('spends CPU in a child', () => {
    spawnSync(process.execPath, ['-e', 'while (process.cpuUsage().user < 400_000);']);
  });
});
