import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { startGantry, stopGantry } from '../cli/gantry-process.js';
import { runConformance } from '../peers/mcp-conformance.js';

// The official MCP conformance suite's server scenarios that apply to a server with tools (not resources, prompts,
// sampling or elicitation, which Gantry does not offer), against `gantry mcp serve --no-auth`.
const scenarios = ['server-initialize', 'ping', 'tools-list', 'logging-set-level', 'dns-rebinding-protection'];

describe('mcp serve against the official MCP conformance suite (server scenarios, Node 22)', function () {
  this.timeout(180_000);
  let child: ChildProcess;
  let url: string;

  before(async () => {
    const started = await startGantry(['mcp', 'serve', '--no-auth', '--port', '0'], (stdout) => /context server on (http:\/\/\S+)/.exec(stdout)?.[1]);
    child = started.child;
    url = started.value;
  });
  after(async () => {
    if (child) await stopGantry(child);
  });

  for (const scenario of scenarios) {
    it(`CTX-TRANSPORT-HTTP: conformance server scenario ${scenario} passes with an empty baseline`, async () => {
      const run = await runConformance('server', ['--url', url, '--scenario', scenario]);
      assert.equal(run.code, 0, run.output);
      assert.ok(run.total > 0 && run.passed === run.total && run.failed === 0, run.output);
    });
  }
});
