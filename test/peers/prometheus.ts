// A real Prometheus for tests: Debian's prometheus (scripts/system-packages.json, installed by `npm run setup`) on
// 127.0.0.1 with a free port, its configuration and storage in a temporary folder, scraping every second. A test that
// needs it fails — never skips — when prometheus is missing, with the command that installs it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from './redis.js';

export interface PrometheusPeer {
  url: string;
  /** The value of an instant query's first sample, or undefined when the answer has none. */
  query(expression: string): Promise<number | undefined>;
  stop(): Promise<void>;
}

export function requirePrometheus(): void {
  const probe = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    throw new Error('Prometheus peer: prometheus is not installed — run `npm run setup` (or `sudo apt-get install -y prometheus`)');
}

/** Starts prometheus scraping `targets` (host:port each, with its metrics path) every second. */
export async function startPrometheus(targets: Array<{ job: string; address: string; path?: string }>): Promise<PrometheusPeer> {
  requirePrometheus();
  const dir = await mkdtemp(join(tmpdir(), 'gantry-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    'scrape_configs:',
    ...targets.flatMap((target) => [
      `  - job_name: ${JSON.stringify(target.job)}`,
      `    metrics_path: ${JSON.stringify(target.path ?? '/metrics')}`,
      '    static_configs:',
      `      - targets: [${JSON.stringify(target.address)}]`,
    ]),
    '',
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const ended = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await ended;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`Prometheus peer: prometheus exited (${child.exitCode}): ${output.slice(-2000)}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Prometheus peer: not ready within 30 s: ${output.slice(-2000)}`);
    }
    await delay(200);
  }
  return {
    url,
    async query(expression) {
      const answer = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`)).json()) as {
        status: string;
        data?: { result?: Array<{ value: [number, string] }> };
      };
      const first = answer.data?.result?.[0];
      return first ? Number(first.value[1]) : undefined;
    },
    stop,
  };
}
