// The official MCP conformance suite (@modelcontextprotocol/conformance, the suite the MCP SDKs run in their CI), run
// as its users run it: its own command, on Node 22 (it needs >= 22; npm's packaged binary, installed by setup), with
// the repository's baseline of expected failures (test/mcp/conformance-baseline.yml, empty).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
}

/** Runs `conformance <mode> …args` and collects what it printed; results go to a temporary folder, removed after. */
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
      rmSync(out, { recursive: true, force: true });
      // eslint-disable-next-line no-control-regex
      const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
      const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(plain);
      resolve({ code, output: plain, passed: Number(summary?.[1] ?? 0), total: Number(summary?.[2] ?? 0), failed: Number(summary?.[3] ?? -1) });
    });
  });
}
