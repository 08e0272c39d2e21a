// The client driver the official MCP conformance suite launches in client mode (`--command "<this> <via>"`): the suite
// appends its scenario server's URL and names the scenario in MCP_CONFORMANCE_SCENARIO (and, where the scenario has
// one, a pre-registered client in MCP_CONFORMANCE_CONTEXT). `library` drives connectContextServer; `cli` runs the built
// `gantry mcp call` as a person would. The sign-in page of the suite's authorization server answers at once with a
// redirect to the loopback callback: the driver's "browser" follows that one redirect.
// Exit 0 when the scenario's exchange went through, 1 with the error on stderr otherwise.
// Plain JavaScript on the built library (dist/: `npm run build` first, as `pretest` does), run by plain node: through
// tsx on the sources each of the suite's ~33 launches spent ~1.2 s more CPU. So it cannot import the TypeScript test
// helpers (test/cli/gantry-process.ts): the few lines that start the built command are here.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const gantryBin = fileURLToPath(new URL('../../dist/lib/cli/main.js', import.meta.url));

/** What the suite's CIMD scenario expects as the client id (the MCP SDK's conformance client sends the same). */
const clientMetadataUrl = 'https://conformance-test.local/client-metadata.json';

/** The tool each scenario's server offers (the auth scenarios' servers: test-tool), and its arguments. */
function toolOf(scenario) {
  if (scenario === 'tools_call') return ['add_numbers', { a: 5, b: 3 }];
  if (scenario === 'sse-retry') return ['test_reconnection', {}];
  if (scenario.startsWith('elicitation')) return ['test_client_elicitation_defaults', {}];
  return ['test-tool', {}];
}

// The scenario's context (MCP_CONFORMANCE_CONTEXT), where it has one: client_id, client_secret; for
// auth/client-credentials-jwt the client's key (private_key_pem, PKCS#8 PEM) and its signing_algorithm; for
// auth/cross-app-access-complete-flow the person's ID token (idp_id_token) and the identity provider that issued it
// (idp_issuer, idp_token_endpoint, idp_client_id).

/** The sign-in a scenario asks for: without a person for the client-credentials and cross-app ones. */
function signIn(scenario, context) {
  if (scenario.startsWith('auth/client-credentials-'))
    return {
      clientCredentials: true,
      ...(context.private_key_pem !== undefined ? { privateKey: context.private_key_pem } : {}),
      ...(context.signing_algorithm !== undefined ? { privateKeyAlg: context.signing_algorithm } : {}),
    };
  if (scenario.startsWith('auth/cross-app-access') && context.idp_id_token !== undefined && context.idp_token_endpoint !== undefined)
    return {
      crossAppAccess: {
        idToken: context.idp_id_token,
        idpTokenEndpoint: context.idp_token_endpoint,
        ...(context.idp_issuer !== undefined ? { idpIssuer: context.idp_issuer } : {}),
        ...(context.idp_client_id !== undefined ? { idpClientId: context.idp_client_id } : {}),
      },
    };
  return {};
}

/** The person in the browser: the authorization endpoint redirects to the loopback callback, which is then visited. */
async function visit(url) {
  const answer = await fetch(url, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (!location) throw new Error(`the authorization endpoint answered ${answer.status} without a redirect`);
  await (await fetch(new URL(location, url))).arrayBuffer();
}

async function viaLibrary(serverUrl, scenario, context, configDir) {
  // Loaded here, not at the top: the `cli` runs have no use for the library (0.8 s of CPU to load).
  const [{ FileTokenStore }, { silentLogger }, { acceptElicitationDefaults, connectContextServer }] = await Promise.all([
    import('../../dist/lib/auth/store/index.js'),
    import('../../dist/lib/log.js'),
    import('../../dist/lib/mcp/client/index.js'),
  ]);
  const options = {
    configDir,
    tokenStore: new FileTokenStore(configDir),
    logger: silentLogger,
    env: {},
    clientMetadataUrl,
    openUrl: visit,
    ...(context.client_id !== undefined ? { clientId: context.client_id } : {}),
    ...(context.client_secret !== undefined ? { clientSecret: context.client_secret } : {}),
    ...signIn(scenario, context),
    ...(scenario.startsWith('elicitation') ? { onElicitation: acceptElicitationDefaults } : {}),
  };
  const connection = await connectContextServer(serverUrl, options);
  try {
    const tools = await connection.listTools();
    const [tool, args] = toolOf(scenario);
    if (tools.some((listed) => listed.name === tool)) await connection.callTool(tool, args);
  } finally {
    await connection.close();
  }
}

/** `gantry mcp call <url> <tool>`: the sign-in address it prints (--no-browser) is visited as above. */
async function viaCli(serverUrl, scenario, context, configDir) {
  const [tool, args] = toolOf(scenario);
  const flags = ['--no-browser', '--store', 'file', ...(context.client_id !== undefined ? ['--client-id', context.client_id] : [])];
  if (scenario.startsWith('auth/client-credentials-')) flags.push('--client-credentials');
  if (scenario.startsWith('elicitation')) flags.push('--accept-elicitation-defaults');
  if (context.private_key_pem !== undefined) {
    // The key goes in a file, as a person would keep it: never on the command line.
    const keyFile = path.join(configDir, 'client-key.pem');
    writeFileSync(keyFile, context.private_key_pem, { mode: 0o600 });
    flags.push('--private-key-file', keyFile, ...(context.signing_algorithm !== undefined ? ['--private-key-alg', context.signing_algorithm] : []));
  }
  const commandArgs = [
    'mcp',
    scenario === 'initialize' ? 'tools' : 'call',
    serverUrl,
    ...(scenario === 'initialize' ? [] : [tool, JSON.stringify(args)]),
    ...flags,
  ];
  // As test/cli/gantry-process.ts's spawnGantry starts it: a minimal environment.
  const child = spawn(process.execPath, [gantryBin, ...commandArgs], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GANTRY_LOG: 'warn',
      GANTRY_CONFIG_DIR: configDir,
      ...(context.client_secret !== undefined ? { GANTRY_MCP_CLIENT_SECRET: context.client_secret } : {}),
    },
  });
  let stderr = '';
  const visits = [];
  child.stdout.pipe(process.stdout);
  child.stderr.on('data', (chunk) => {
    stderr += chunk.toString();
    for (const match of chunk.toString().matchAll(/^\s+(http:\/\/\S+)$/gm)) visits.push(visit(match[1]));
  });
  const code = await new Promise((resolve) => child.once('close', resolve));
  await Promise.all(visits);
  if (code !== 0) throw new Error(`gantry mcp call exited with ${code}: ${stderr}`);
}

const [via, serverUrl] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const configDir = mkdtempSync(path.join(tmpdir(), 'gantry-conformance-client-'));
const run = via === 'cli' ? viaCli : viaLibrary;
try {
  if (!serverUrl || (via !== 'cli' && via !== 'library')) throw new Error('usage: mcp-conformance-client.mjs library|cli <server-url>');
  await run(serverUrl, scenario, context, configDir);
  process.exitCode = 0;
} catch (error) {
  process.stderr.write(`${scenario}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  rmSync(configDir, { recursive: true, force: true });
}
