// The last-resort clean-ups (lib/cleanup.ts) and signals, in processes of their own: alone, a signal runs them and the
// process dies by it; during a graceful shutdown they wait for the process to exit, so a browser a running gate uses
// is not killed under it; beside any other handler they run on the signal as before.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cleanupModule = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../lib/cleanup.ts');

async function run(script: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; log: string }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'gantry-cleanup-'));
  const file = path.join(folder, 'child.ts');
  const log = path.join(folder, 'log.txt');
  await writeFile(log, '');
  await writeFile(
    file,
    `import { appendFileSync } from 'node:fs';\nimport { registerEmergencyCleanup, signalsHandledGracefully } from ${JSON.stringify(cleanupModule)};\nconst note = (line: string) => appendFileSync(${JSON.stringify(log)}, line + '\\n');\n${script}\nnote('ready');\nsetInterval(() => {}, 1000);\n`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: 'ignore' });
  try {
    const deadline = Date.now() + 60_000;
    while (!(await readFile(log, 'utf8')).includes('ready')) {
      if (Date.now() > deadline) throw new Error('the child did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGTERM');
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    return { code, signal, log: await readFile(log, 'utf8') };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

describe('last-resort clean-ups and signals (lib/cleanup.ts)', function () {
  this.timeout(120_000);

  it('alone: SIGTERM runs the clean-ups and the process dies by the signal', async () => {
    const result = await run(`registerEmergencyCleanup(() => note('cleaned'));`);
    assert.equal(result.signal, 'SIGTERM');
    assert.match(result.log, /ready\ncleaned\n/);
  });

  it('beside a graceful shutdown (signalsHandledGracefully): the clean-ups wait until the process exits, after the work it finishes', async () => {
    const result = await run(`registerEmergencyCleanup(() => note('cleaned'));
signalsHandledGracefully();
process.on('SIGTERM', () => { note('finishing'); setTimeout(() => { note('finished'); process.exit(0); }, 300); });`);
    assert.equal(result.code, 0);
    assert.equal(result.log, 'ready\nfinishing\nfinished\ncleaned\n');
  });

  it("beside another handler that is no graceful shutdown (a library's own): the clean-ups run on the signal, and the process is left to that handler", async () => {
    const result = await run(`registerEmergencyCleanup(() => note('cleaned'));
process.on('SIGTERM', () => { setTimeout(() => { note('handler'); process.exit(7); }, 300); });`);
    assert.equal(result.code, 7);
    assert.equal(result.log, 'ready\ncleaned\nhandler\n');
  });
});
