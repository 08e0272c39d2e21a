// The dev servers' well-known ports: `gantry dev` and `gantry demo` must start while something else holds them.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GantryError } from '../../lib/errors.js';
import { setLogger, getLogger, createLogger } from '../../lib/log.js';
import { DEV_SECRETS_PORT, startDevSecrets } from '../../devserver/secrets/index.js';
import { DEV_PAGEANALYSIS_PORT, startDevPageanalysis } from '../../devserver/pageanalysis/index.js';

/** Holds `port` on 127.0.0.1 for the test (if something else already holds it, it is taken all the same). */
async function hold(port: number): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer();
  const held = await new Promise<boolean>((resolve) => server.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)));
  const actual = held ? (server.address() as net.AddressInfo).port : port;
  return { port: actual, release: () => (held ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve()) };
}

describe('dev servers on a taken port', function () {
  this.timeout(30_000);
  let dir: string;
  const warnings: string[] = [];
  const saved = getLogger();
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gantry-dev-port-'));
    setLogger(createLogger({ level: 'warn', write: (line) => warnings.push(line) }));
  });
  after(async () => {
    setLogger(saved);
    await rm(dir, { recursive: true, force: true });
  });

  const starters = [
    {
      name: 'secrets',
      port: DEV_SECRETS_PORT,
      variable: 'GANTRY_DEV_SECRETS_PORT',
      start: (env: NodeJS.ProcessEnv) => startDevSecrets({ host: '127.0.0.1', stateDir: dir }, env),
    },
    {
      name: 'pageanalysis',
      port: DEV_PAGEANALYSIS_PORT,
      variable: 'GANTRY_DEV_PAGEANALYSIS_PORT',
      start: (env: NodeJS.ProcessEnv) => startDevPageanalysis({ host: '127.0.0.1' }, env),
    },
  ];

  for (const starter of starters) {
    it(`the ${starter.name} dev server falls back to a free port (with a warning) when ${starter.port} is taken`, async () => {
      const holder = await hold(starter.port);
      warnings.length = 0;
      try {
        const server = await starter.start({});
        try {
          assert.notEqual(new URL(server.url).port, String(starter.port));
          assert.ok((await fetch(server.url)).status > 0, 'it answers');
          assert.match(warnings.join('\n'), new RegExp(`port ${starter.port} is in use; .* listens on ${server.url.replace(/[.]/g, '\\.')} instead`));
        } finally {
          await server.stop();
        }
      } finally {
        await holder.release();
      }
    });

    it(`the ${starter.name} dev server refuses a port asked for in ${starter.variable} that is taken, with a hint (exit 2)`, async () => {
      const holder = await hold(0);
      try {
        await assert.rejects(starter.start({ [starter.variable]: String(holder.port) }), (error: unknown) => {
          assert.ok(error instanceof GantryError, String(error));
          assert.equal(error.exitCode, 2);
          assert.match(error.message, new RegExp(`port ${holder.port} on 127\\.0\\.0\\.1 is in use`));
          assert.match(error.hint ?? '', new RegExp(starter.variable));
          return true;
        });
      } finally {
        await holder.release();
      }
    });
  }
});
