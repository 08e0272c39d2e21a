// Interactions recorded against the real REST API (@octokit/fixtures), replayed by @octokit/fixtures-server in its
// own process on a free port of 127.0.0.1. Each `load(scenario)` gives a fresh base URL for one run of the scenario:
// requests must come in the recorded order with the recorded method, path, query, body and request headers, and the
// recorded answers come back — status, body and every header (x-ratelimit-*, Link, ETag …), URLs pointing back here.
//
// Two recorded *request* headers are written as Gantry sends them before the server loads the scenarios; nothing the
// platform answered is changed. Octokit sent `Authorization: token <t>` and `Content-Type: application/json;
// charset=utf-8`; PlatformClient sends `Authorization: Bearer <t>` (GitHub takes both alike; the credential header is
// built from the token alone, not a setting) and `Content-Type: application/json` (RFC 8259 §11 defines no charset
// parameter for JSON: it is UTF-8). The recorder's `Accept: application/vnd.github.v3+json` stays as recorded: the
// tests set it as a caller would, with the client's `headers` option or `gantry platform api -H`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from './redis.js';

export interface OctokitFixtures {
  /** http://127.0.0.1:port */
  url: string;
  /** Loads one run of a scenario; its base URL stands for https://api.github.com. */
  load(scenario: string): Promise<string>;
  stop(): Promise<void>;
}

interface RecordedInteraction {
  reqheaders: Record<string, string | number>;
  [key: string]: unknown;
}

const require = createRequire(import.meta.url);
const serverBin = join(dirname(require.resolve('@octokit/fixtures-server/package.json')), 'bin', 'server.js');
const scenariosDir = join(dirname(require.resolve('@octokit/fixtures/package.json')), 'scenarios', 'api.github.com');

/** The token every recording was made with (normalized by @octokit/fixtures). */
export const recordedToken = '0000000000000000000000000000000000000001';
/** The media type the recordings asked for. */
export const recordedAccept = 'application/vnd.github.v3+json';

/** The recording's interactions with the two request headers written as Gantry sends them (see the top of the file). */
export function asGantrySends(interactions: RecordedInteraction[]): RecordedInteraction[] {
  return interactions.map((interaction) => {
    const reqheaders = { ...interaction.reqheaders };
    if (typeof reqheaders.authorization === 'string') reqheaders.authorization = reqheaders.authorization.replace(/^token /, 'Bearer ');
    if (reqheaders['content-type'] === 'application/json; charset=utf-8') reqheaders['content-type'] = 'application/json';
    return { ...interaction, reqheaders };
  });
}

function startOnce(port: number, dir: string, timeoutMs: number): Promise<{ child: ChildProcess }> {
  const origin = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [serverBin, '--port', String(port), '--fixtures-url', origin, '--log-level', 'error', '--ttl', '600000', '--fixtures', `${dir}/*/normalized-fixture.json`],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    child.once('exit', (code, signal) => {
      exited = true;
      reject(new Error(`octokit fixtures server exited (${signal ?? `code ${code}`}) before answering: ${output.slice(-2000)}`));
    });
    const poll = async () => {
      if (exited) return;
      try {
        const answer = await fetch(`${origin}/ping`);
        if (answer.ok) return resolve({ child });
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        return reject(new Error(`octokit fixtures server did not answer within ${timeoutMs} ms: ${output.slice(-2000)}`));
      }
      setTimeout(() => void poll(), 50);
    };
    void poll();
  });
}

/** Starts the fixtures server with the named scenarios of @octokit/fixtures. */
export async function startOctokitFixtures(scenarios: readonly string[], options: { timeoutMs?: number } = {}): Promise<OctokitFixtures> {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-octokit-fixtures-'));
  for (const scenario of scenarios) {
    const recorded = JSON.parse(readFileSync(join(scenariosDir, scenario, 'normalized-fixture.json'), 'utf8')) as RecordedInteraction[];
    mkdirSync(join(dir, scenario));
    writeFileSync(join(dir, scenario, 'normalized-fixture.json'), JSON.stringify(asGantrySends(recorded)));
  }
  let started: { child: ChildProcess } | undefined;
  let port = 0;
  for (let attempt = 0; attempt < 3 && !started; attempt += 1) {
    port = await freePort();
    try {
      started = await startOnce(port, dir, options.timeoutMs ?? 15_000);
    } catch (error) {
      if (attempt === 2 || !/EADDRINUSE/.test((error as Error).message)) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const { child } = started!;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async load(scenario) {
      const answer = await fetch(`${url}/fixtures`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scenario }) });
      const body = (await answer.json()) as { url?: string; error?: string };
      if (answer.status !== 201 || !body.url) throw new Error(`octokit fixtures server: scenario ${scenario}: ${answer.status} ${JSON.stringify(body)}`);
      return body.url;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
