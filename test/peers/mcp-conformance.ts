// The official MCP conformance suite (@modelcontextprotocol/conformance, the suite the MCP SDKs run in their CI), run
// as its users run it: its own command, on Node 22 (it needs >= 22; npm's packaged binary, installed by setup), with
// the repository's baseline of expected failures (test/mcp/conformance-baseline.yml, empty).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from '../../scripts/node-runtimes.mjs';

const require = createRequire(import.meta.url);
const suite = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
export const baseline = fileURLToPath(new URL('../mcp/conformance-baseline.yml', import.meta.url));

export interface ConformanceRun {
  code: number | null;
  output: string;
  /** From the suite's "Passed: N/M, F failed" line. */
  passed: number;
  total: number;
  failed: number;
  /** What the suite saved for each scenario it ran, by the scenario's name (`--output-dir`). */
  scenarios: Map<string, ScenarioResult>;
}

/** One check of a scenario, as the suite records it in the scenario's checks.json. */
export interface ConformanceCheck {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  description: string;
  errorMessage?: string;
}

/** A scenario's checks and, in client mode, what the client printed (stdout.txt, stderr.txt). */
export interface ScenarioResult {
  checks: ConformanceCheck[];
  clientStdout: string;
  clientStderr: string;
}

/**
 * The scenarios' results in the output folder: `<scenario>-<time>/checks.json` (a scenario's name may hold a slash,
 * so its folder may be nested), beside it the client's output in client mode; in server mode the folder's name starts
 * with `server-`.
 */
function savedResults(out: string, mode: 'server' | 'client'): Map<string, ScenarioResult> {
  const results = new Map<string, ScenarioResult>();
  for (const file of readdirSync(out, { recursive: true, encoding: 'utf8' })) {
    if (path.basename(file) !== 'checks.json') continue;
    const dir = path.dirname(file);
    const folder = dir
      .split(path.sep)
      .join('/')
      .replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const name = mode === 'server' ? folder.replace(/^server-/, '') : folder;
    const read = (saved: string) => {
      try {
        return readFileSync(path.join(out, dir, saved), 'utf8');
      } catch {
        return '';
      }
    };
    results.set(name, { checks: JSON.parse(read('checks.json')) as ConformanceCheck[], clientStdout: read('stdout.txt'), clientStderr: read('stderr.txt') });
  }
  return results;
}

/**
 * Runs `conformance <mode> …args` and collects what it printed and the results it saved (to a temporary folder, removed
 * after).
 */
export function runConformance(mode: 'server' | 'client', args: readonly string[], timeoutMs = 120_000): Promise<ConformanceRun> {
  const node = nodeBinary(22);
  const out = mkdtempSync(path.join(tmpdir(), 'gantry-conformance-'));
  return new Promise((resolve, reject) => {
    const child = spawn(node, [suite, mode, ...args, '--expected-failures', baseline, '--output-dir', out], {
      cwd: out,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const scenarios = savedResults(out, mode);
      rmSync(out, { recursive: true, force: true });
      // eslint-disable-next-line no-control-regex
      const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
      const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(plain);
      resolve({ code, output: plain, passed: Number(summary?.[1] ?? 0), total: Number(summary?.[2] ?? 0), failed: Number(summary?.[3] ?? -1), scenarios });
    });
  });
}
