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

  it('OPS-METRICS: each authorization refusal is counted under its own reason, decided where the refusal is (not read from its description): no-token, malformed, expired, wrong-audience, invalid-token, insufficient-scope, unavailable', async () => {
    const counted = new ServerMetrics('mcp-serve');
    const observer = { refusal: (reason: string) => counted.authRefusals.inc({ reason }) };
    // A second authorization server, for the introspected tokens: asked about an unknown token, then gone.
    const gone = await startOidcResourcePeer();
    let goneStopped = false;
    const servers = [
      await startContextServer({ authorizationServer: peer.issuer, clockToleranceSeconds: 0, logger: silentLogger, env: {}, observer }),
      await startContextServer({ authorizationServer: gone.issuer, introspection: gone.introspection, logger: silentLogger, env: {}, observer }),
    ];
    const [jwtOnly, introspecting] = servers as [ContextServer, ContextServer];
    try {
      const send = (target: ContextServer, authorization: string | undefined, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }, query = '') =>
        fetch(`${target.url}${query}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
          body: JSON.stringify(body),
        }).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        });
      peer.setTtl(1);
      const shortLived = await peer.token(jwtOnly.resource, 'modules:read');
      peer.setTtl(300);
      const good = await peer.token(jwtOnly.resource, 'modules:read');
      const another = await peer.token(jwtOnly.resource, 'modules:read secrets:list');
      // Another token's signature: a JWT whose signature does not verify.
      const forged = `${good.split('.').slice(0, 2).join('.')}.${another.split('.')[2]}`;
      peer.setFormat('opaque');
      const opaque = await peer.token(jwtOnly.resource, 'modules:read');
      peer.setFormat('jwt');
      await new Promise((resolve) => setTimeout(resolve, 2_100));

      assert.equal(await send(jwtOnly, undefined), 401, 'no token');
      assert.equal(await send(jwtOnly, 'Bearer not a token'), 400, 'a credential with spaces');
      assert.equal(await send(jwtOnly, `Bearer ${good}`, undefined, `?access_token=${good}`), 400, 'a token in the query');
      assert.equal(await send(jwtOnly, `Bearer ${shortLived}`), 401, 'expired');
      assert.equal(await send(jwtOnly, `Bearer ${await peer.token('https://elsewhere.example/mcp', 'modules:read')}`), 401, 'another audience');
      assert.equal(await send(jwtOnly, `Bearer ${forged}`), 401, 'a forged signature');
      assert.equal(await send(jwtOnly, `Bearer ${opaque}`), 401, 'not a JWT, no introspection');
      // Inactive at introspection may be expired, revoked or never issued: the server cannot tell, so it is invalid-token.
      assert.equal(await send(introspecting, 'Bearer never-issued-0123456789'), 401, 'inactive at introspection');
      assert.equal(
        await send(jwtOnly, `Bearer ${good}`, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'secrets_list', arguments: {} } }),
        403,
      );
      await gone.stop();
      goneStopped = true;
      assert.equal(await send(introspecting, 'Bearer asked-while-it-is-gone-0123'), 503, 'the authorization server does not answer');

      const text = await counted.text();
      const refusals = Object.fromEntries(
        [...text.matchAll(/^gantry_mcp_authorization_refusals_total\{reason="([^"]+)"\} (\d+)$/gm)].map((match) => [match[1], Number(match[2])]),
      );
      assert.deepEqual(refusals, {
        'no-token': 1,
        malformed: 2,
        expired: 1,
        'wrong-audience': 1,
        'invalid-token': 3,
        'insufficient-scope': 1,
        unavailable: 1,
      });
    } finally {
      peer.setTtl(300);
      peer.setFormat('jwt');
      await Promise.all(servers.map((server) => server.stop()));
      if (!goneStopped) await gone.stop();
    }
  });
});
