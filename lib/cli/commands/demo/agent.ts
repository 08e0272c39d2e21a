import { pageWaitMs, runningServer, type DemoStep } from './step.js';

/**
 * An agent signs in to Gantry's context server and calls a tool, as `gantry mcp call` does it: the server answers the
 * first request with 401 and where its metadata is; the client finds the embedded authorization server from it,
 * registers itself, sends the person (headless Chromium here, signed in as dev) to the login-and-consent page with
 * PKCE and the server's URI as `resource`, takes the code on its loopback callback, and calls `modules_resolve` with
 * a token issued for that server alone. The tool reaches the embedded registry with Gantry's own credentials.
 */
export const agentStep: DemoStep = {
  name: 'agent',
  description: 'an agent signs in to gantry mcp serve (OAuth 2.1: discovery, registration, PKCE, consent in headless Chromium) and calls modules_resolve',
  async run({ servers, out, workDir, json, browser }) {
    const oauth = runningServer(servers, 'oauth', 'the embedded authorization server');
    const registry = runningServer(servers, 'registry', 'the embedded module registry');
    const { startContextServer } = await import('../../../mcp/index.js');
    const { connectContextServer } = await import('../../../mcp/index.js');
    const { silentLogger } = await import('../../../log.js');
    const { openTokenStore } = await import('../../../auth/index.js');
    const server = await startContextServer({ authorizationServer: oauth.url, env: {}, logger: silentLogger });
    const pages: string[] = [];
    try {
      if (!json) out.line(`  gantry mcp serve on ${server.url}, tokens from ${oauth.url}`);
      const connection = await connectContextServer(server.url, {
        // A 0600 file in the demo's work folder, as the login step keeps its tokens: never this machine's keyring.
        tokenStore: (await openTokenStore('file', { configDir: workDir, profile: 'demo-agent', insecureStorage: true })).store,
        configDir: workDir,
        openUrl: async (url) => {
          if (!json)
            out.line(
              `  sign in: ${new URL(url).origin}${new URL(url).pathname}?… (PKCE S256, resource ${new URL(url).searchParams.get('resource')}); approving as dev in headless Chromium…`,
            );
          await browser.use(async (session) => {
            await session.setTimeouts({ implicit: pageWaitMs });
            await session.navigateTo(url);
            await session.sendKeys(await session.findElement('#username'), 'dev');
            await session.sendKeys(await session.findElement('#password'), 'dev');
            await session.click(await session.findElement('#allow'));
            // The click only starts the form's POST: wait for the loopback callback's page before the step lets the browser go.
            await session.findElement('#result');
            pages.push(String(await session.executeScript('return document.body.innerText')));
          });
        },
      });
      try {
        const tools = await connection.listTools();
        const source = `${new URL(registry.url).host}/gantry/network/aws`;
        const result = await connection.callTool('modules_resolve', { source, version: '~> 1.0' });
        if (result.isError) throw new Error(`modules_resolve failed: ${JSON.stringify(result.content)}`);
        const resolved = result.structuredContent as { source: string; version: string; location: string };
        const scopes = connection.session.grantedScopes();
        if (!json) {
          out.line(
            `  the callback page said: ${
              pages[0]
                ?.split('\n')
                .find((line) => line.trim() !== '')
                ?.trim() ?? '(nothing)'
            }`,
          );
          out.line(
            `  signed in; token for ${connection.resource} with scope ${scopes.join(' ')}; ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`,
          );
          out.line(`  modules_resolve ${source} "~> 1.0" -> ${resolved.version} (${resolved.location})`);
          out.line(
            '  try: gantry dev, then gantry mcp serve --authorization-server <its oauth URL>; gantry mcp call <server URL> modules_versions \'{"source":"127.0.0.1:5758/gantry/network/aws"}\'',
          );
        }
        return { resource: connection.resource, scopes, tools: tools.map((t) => t.name), resolved: { source: resolved.source, version: resolved.version } };
      } finally {
        await connection.close();
      }
    } finally {
      await server.stop();
    }
  },
};
