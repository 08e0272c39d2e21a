// The context server's authorization metrics against a real authorization server (oidc-provider issues the tokens):
// refusals by reason, requests by tool and outcome, JWKS fetches, and readiness once the keys are held.
import assert from 'node:assert/strict';
import { startContextServer, type ContextServer } from '../../lib/mcp/index.js';
import { Health, ServerMetrics } from '../../lib/ops/index.js';
import { silentLogger } from '../../lib/log.js';
import { startOidcResourcePeer, type OidcResourcePeer } from '../peers/oidc-resource.js';

describe('ops: mcp serve behind OAuth (authorization metrics)', function () {
  this.timeout(60_000);
  let peer: OidcResourcePeer;
  let server: ContextServer;
  const metrics = new ServerMetrics('mcp-serve');

  before(async () => {
    peer = await startOidcResourcePeer();
    server = await startContextServer({
      authorizationServer: peer.issuer,
      clockToleranceSeconds: 0,
      logger: silentLogger,
      env: {},
      observer: {
        request: (tool, outcome) => metrics.mcpRequests.inc({ tool, outcome }),
        refusal: (reason) => metrics.authRefusals.inc({ reason }),
        keysFetched: () => metrics.jwksRefreshes.inc(),
      },
    });
  });
  after(async () => {
    await server?.stop();
    await peer?.stop();
  });

  const call = (token: string | undefined, body: unknown) =>
    fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    }).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    });

  it('OPS-METRICS: refusals by reason (no token, wrong audience, insufficient scope), requests by tool and outcome, one JWKS fetch; readiness holds the keys', async () => {
    const health = new Health().check('authorization-server-keys', () => server.keysReady());
    assert.equal((await health.report()).status, 'ready');
    assert.equal(await call(undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' }), 401);
    const other = await peer.token('https://elsewhere.example/mcp', 'modules:read');
    assert.equal(await call(other, { jsonrpc: '2.0', id: 2, method: 'tools/list' }), 401);
    const readOnly = await peer.token(server.resource, 'modules:read');
    assert.equal(await call(readOnly, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'secrets_list', arguments: {} } }), 403);
    assert.equal(await call(readOnly, { jsonrpc: '2.0', id: 4, method: 'tools/list' }), 200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const text = await metrics.text();
    assert.match(text, /gantry_mcp_authorization_refusals_total\{reason="no-token"\} 1/);
    assert.match(text, /gantry_mcp_authorization_refusals_total\{reason="wrong-audience"\} 1/);
    assert.match(text, /gantry_mcp_authorization_refusals_total\{reason="insufficient-scope"\} 1/);
    assert.match(text, /gantry_mcp_requests_total\{tool="secrets_list",outcome="refused"\} 1/);
    assert.match(text, /gantry_mcp_requests_total\{tool="tools\/list",outcome="ok"\} 1/);
    assert.match(text, /gantry_mcp_jwks_fetches_total 1/);
    assert.ok(!text.includes(readOnly) && !text.includes(other), 'no token in a label');
  });
});
