import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runConformance, type ScenarioResult } from '../peers/mcp-conformance.js';

// The official MCP conformance suite's client scenarios: the suite starts each scenario's server (and authorization
// server), launches the driver (test/peers/mcp-conformance-client.mjs, on the built library) with its URL, and checks
// what the client sent. The driver runs on the Node running the tests; the suite itself on Node 22. Every client
// scenario of the suite runs, the extension ones too: client credentials (secret and private_key_jwt), cross-app
// access, elicitation defaults.
const driver = fileURLToPath(new URL('../peers/mcp-conformance-client.mjs', import.meta.url));
// The suite splits the command at spaces and runs it in a shell: none of these paths may hold a space or a quote.
const command = (via: 'library' | 'cli') => [process.execPath, driver, via].join(' ');

/** Each scenario, with the rules it holds Gantry to. */
const scenarios: Record<string, string> = {
  initialize: 'CTX-TRANSPORT-HTTP',
  tools_call: 'CTX-TRANSPORT-HTTP',
  'sse-retry': 'CTX-TRANSPORT-HTTP',
  'auth/metadata-default': 'CTX-STD-RFC9728 CTX-STD-RFC8414 CTX-EP-401-WWW-AUTHENTICATE',
  'auth/metadata-var1': 'CTX-STD-RFC9728 CTX-STD-RFC8414',
  'auth/metadata-var2': 'CTX-STD-RFC9728 CTX-URI-PORT-PATH CTX-AUTH-RESOURCE-ALWAYS',
  'auth/metadata-var3': 'CTX-STD-RFC9728 CTX-STD-RFC8414',
  'auth/basic-cimd': 'CTX-DCR-FALLBACK',
  'auth/scope-from-www-authenticate': 'CTX-EP-401-WWW-AUTHENTICATE',
  'auth/scope-from-scopes-supported': 'CTX-STD-RFC9728',
  'auth/scope-omitted-when-undefined': 'CTX-EP-AUTHORIZATION-REQUEST',
  'auth/scope-step-up': 'CTX-ERR-403',
  'auth/scope-retry-limit': 'CTX-ERR-403',
  'auth/token-endpoint-auth-basic': 'CTX-EP-TOKEN-REQUEST CTX-STD-OAUTH21',
  'auth/token-endpoint-auth-post': 'CTX-EP-TOKEN-REQUEST CTX-STD-OAUTH21',
  'auth/token-endpoint-auth-none': 'CTX-EP-TOKEN-REQUEST CTX-STD-OAUTH21',
  'auth/pre-registration': 'CTX-DCR-FALLBACK',
  'auth/2025-03-26-oauth-metadata-backcompat': 'CTX-STD-RFC8414 CTX-EP-AUTHORIZATION-REQUEST',
  'auth/2025-03-26-oauth-endpoint-fallback': 'CTX-EP-AUTHORIZATION-REQUEST CTX-EP-TOKEN-REQUEST',
  'auth/resource-mismatch': 'CTX-TOKEN-AUDIENCE CTX-AUTH-CLIENT-OWN-AS-TOKENS',
  'auth/offline-access-scope': 'CTX-EP-AUTHORIZATION-REQUEST',
  'auth/offline-access-not-supported': 'CTX-EP-AUTHORIZATION-REQUEST',
  'auth/client-credentials-basic': 'CTX-STD-OAUTH21 CTX-DCR-FALLBACK CTX-AUTH-RESOURCE-ALWAYS',
  'auth/client-credentials-jwt': 'CTX-STD-OAUTH21 CTX-DCR-FALLBACK CTX-AUTH-RESOURCE-ALWAYS',
  'auth/cross-app-access-complete-flow': 'CTX-STD-RFC8707 CTX-AUTH-RESOURCE-ALWAYS',
  'elicitation-sep1034-client-defaults': 'CTX-TRANSPORT-HTTP',
};

/** `gantry mcp call` (or `tools`) as the client: the sign-in paths a person takes with the command. */
const throughCli = [
  'tools_call',
  'auth/metadata-var2',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/client-credentials-basic',
  'auth/client-credentials-jwt',
  'elicitation-sep1034-client-defaults',
];

describe('the MCP client against the official MCP conformance suite (client scenarios, suite on Node 22)', function () {
  this.timeout(120_000);
  // 14 of the library's scenarios: a run of each of these suites of the suite's (`--suite`: its scenarios at once, each
  // with its own server and driver, results saved per scenario), not a suite process per scenario — each spent ~1.4 s
  // of CPU starting. Small suites only: drivers starting at once on 2 busy cores starve one another, and a starved
  // driver failed (`all`, 26 at once: sse-retry's reconnection later than its 200 ms tolerance, ECONNRESET after
  // initialize in tools_call and elicitation; `auth`, 14 at once: ECONNRESET in auth/scope-step-up once in three runs,
  // most likely its MCP connection idle through the slowed sign-in past the server's 5 s). The rest run on their own.
  const suites = ['metadata', 'sep-835', 'extensions', 'backcompat'];
  const inSuites = { output: '', scenarios: new Map<string, ScenarioResult>() };
  before(async function () {
    this.timeout(300_000);
    for (const suite of suites) {
      const run = await runConformance('client', ['--command', command('library'), '--suite', suite, '--timeout', '120000'], 240_000);
      assert.match(run.output, /^Total: \d+ passed, \d+ failed, \d+ warnings$/m, run.output);
      inSuites.output += run.output;
      for (const [scenario, result] of run.scenarios) inSuites.scenarios.set(scenario, result);
    }
  });

  /** The suite's lines on the scenario: its summary ("✓ <name>: N passed, 0 failed") and, indented, any baseline one. */
  const linesOn = (scenario: string) => inSuites.output.split('\n').filter((line) => line.replace(/^ *[✓✗~] /, '').replace(/: .*/, '') === scenario);

  /** What the suite said of the scenario: its lines, its checks, what the driver printed. */
  function report(scenario: string, result: ScenarioResult | undefined): string {
    const checks = (result?.checks ?? []).map(
      (check) => `  [${check.id}] ${check.status} ${check.description}${check.errorMessage ? `: ${check.errorMessage}` : ''}`,
    );
    return [...linesOn(scenario), 'Checks:', ...checks, 'Client stdout:', result?.clientStdout ?? '', 'Client stderr:', result?.clientStderr ?? ''].join('\n');
  }

  async function passes(scenario: string, via: 'library' | 'cli') {
    const lines = via === 'library' ? linesOn(scenario) : [];
    if (!lines.some((line) => /^[✓✗] /.test(line))) {
      // Not in the suite's run (the `cli` ones, or a scenario of no suite): a run of its own.
      const run = await runConformance('client', ['--command', command(via), '--scenario', scenario]);
      assert.equal(run.code, 0, run.output);
      assert.ok(run.total > 0 && run.passed === run.total && run.failed === 0, run.output);
      assert.doesNotMatch(run.output, /WARNING/, run.output);
      return;
    }
    const result = inSuites.scenarios.get(scenario);
    const output = report(scenario, result);
    assert.ok(result, output);
    const counted = result.checks.filter((check) => check.status === 'SUCCESS' || check.status === 'FAILURE');
    assert.ok(counted.length > 0 && counted.every((check) => check.status === 'SUCCESS'), output);
    assert.ok(!result.checks.some((check) => check.status === 'WARNING'), output);
    assert.doesNotMatch(output, /WARNING/, output);
    // Against the baseline (test/mcp/conformance-baseline.yml): neither an unexpected nor an expected failure, nor a
    // stale entry — the suite lists each such scenario, indented, under its heading.
    assert.deepEqual(
      lines.filter((line) => line.startsWith(' ')),
      [],
      output,
    );
  }

  for (const [scenario, rules] of Object.entries(scenarios)) {
    it(`${rules}: conformance client scenario ${scenario} passes through connectContextServer with an empty baseline`, () => passes(scenario, 'library'));
  }
  for (const scenario of throughCli) {
    it(`${scenarios[scenario]}: conformance client scenario ${scenario} passes through gantry mcp ${scenario === 'initialize' ? 'tools' : 'call'}`, () =>
      passes(scenario, 'cli'));
  }
});
