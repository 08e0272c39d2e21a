// What the fleet test and bench/fleet share: the built `gantry` in a process of its own (dist/, as `npm test` and
// `npm run bench` build it first), a signed push delivery sent as the platform sends it, and the workers' job lines.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sign } from '@octokit/webhooks-methods';
import { pushPayload } from '../webhooks/helpers/examples.js';
import { untilReady, type Started } from '../webhooks/helpers/queue-processes.js';

export const FLEET_SECRET = 'fleet-secret-9Vx4';
const main = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

/** `gantry <args>` in `cwd`, with the webhook secret, until `ready`'s first group shows on stdout (its value). */
export function startGantry(args: string[], cwd: string, what: string, ready: RegExp): Promise<Started & { value: string }> {
  const child = spawn(process.execPath, [main, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GANTRY_LOG: 'warn', GANTRY_WEBHOOK_SECRET: FLEET_SECRET },
  });
  return untilReady(child, what, ({ stdout }) => ready.exec(stdout)?.[1]);
}

/** `gantry hooks serve` on a free port; its value is the delivery URL. */
export const startReceiver = (args: string[], cwd: string, what: string) =>
  startGantry(['hooks', 'serve', '--port', '0', ...args], cwd, what, /receiving webhooks on (http:\/\/\S+\/hooks)/);

/** `gantry hooks worker`. */
export const startWorker = (args: string[], cwd: string, what: string) => startGantry(['hooks', 'worker', ...args], cwd, what, /(working webhook jobs) from/);

const body = JSON.stringify(pushPayload);
const signature = sign(FLEET_SECRET, body);

export interface Answer {
  id: string;
  status: number;
  /** The answer's `status` member (done, duplicate, accepted), or the start of a body that is not JSON. */
  outcome: string;
  at: number;
}

/** Posts a signed push delivery with GUID `id` to `url`, as the platform does. */
export async function postPush(url: string, id: string): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Platform-Hookshot/fleet',
      'x-platform-event': 'push',
      'x-platform-delivery': id,
      'x-platform-hook-id': '29',
      'x-hub-signature-256': await signature,
    },
    body,
  });
  const text = await response.text();
  let outcome: string;
  try {
    outcome = String((JSON.parse(text) as { status?: unknown }).status ?? '');
  } catch {
    outcome = text.slice(0, 200);
  }
  return { id, status: response.status, outcome, at: Date.now() };
}

export interface Run {
  worker: number;
  id: string;
  attempt: number;
  outcome: string;
}

/** The jobs a worker (or `hooks serve` that works) printed: `<time> push <GUID> attempt <n> done|failed <ms>ms`. */
export function runsOf(worker: number, stdout: string): Run[] {
  const runs: Run[] = [];
  for (const match of stdout.matchAll(/^\S+ push (\S+) attempt (\d+) (\w+) \d+ms$/gm))
    runs.push({ worker, id: match[1]!, attempt: Number(match[2]), outcome: match[3]! });
  return runs;
}
