// The authorization endpoint of the embedded server (context-server clients): its 400 pages, its errors by redirect
// with state and iss, PKCE S256 only, resource indicators, scopes, and the login and consent form posted over HTTP.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer } from '../../../devserver/oauth/index.js';
import { REDIRECT, RESOURCE, callbackParams, getAuthorize, pkce, postDecision, transactionOf } from './codeflow-helpers.js';

describe('devserver/oauth: the authorization endpoint (context-server clients)', function () {
  this.timeout(20_000);
  let server: OAuthServer;
  let clientId: string;
  const { challenge } = pkce();
  const valid = () => ({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    scope: 'modules:read',
    resource: RESOURCE,
  });
  before(async () => {
    server = await startOAuthServer();
    server.addUser({ username: 'alice', email: 'alice@gantry.test', password: 'wonderland' });
    server.addUser({ username: 'gone', email: 'gone@gantry.test', disabled: true });
    clientId = server.registerClient({ redirectUris: [REDIRECT, 'https://app.example.com/cb'], name: 'Agent <One>' }).id;
  });
  after(() => server.stop());

  it('CTX-AS-REDIRECT-EXACT-MATCH CTX-ERR-400: an unknown client, a device client, or a redirect_uri not exactly registered is a 400 page, never a redirect', async () => {
    const device = server.registerClient({ name: 'A device' }).id;
    for (const change of [
      { client_id: 'nobody' },
      { client_id: undefined },
      { client_id: device },
      { redirect_uri: 'http://127.0.0.1:8976/callback/' },
      { redirect_uri: 'http://127.0.0.1:8976/Callback' },
      { redirect_uri: 'http://localhost:8976/callback' },
      { redirect_uri: 'http://127.0.0.1:8977/callback' },
      { redirect_uri: 'http://127.0.0.1:8976/callback?x=1' },
      { redirect_uri: 'https://app.example.com/cb/../cb' },
      { redirect_uri: 'https://evil.example.com/cb' },
      { redirect_uri: undefined },
    ]) {
      const page = await getAuthorize(server.url, { ...valid(), ...change });
      assert.equal(page.status, 400, JSON.stringify(change));
      assert.equal(page.location, null, JSON.stringify(change));
      assert.match(page.headers.get('content-type')!, /^text\/html/);
      assert.match(page.html, /id="error"/);
    }
  });

  it('CTX-EP-AUTHORIZATION-REQUEST CTX-STD-OAUTH21: errors go back by redirect with error, error_description, state and iss — response_type, PKCE (S256 only, plain refused), resource, scope', async () => {
    for (const [change, error] of [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: undefined }, 'unsupported_response_type'],
      [{ code_challenge: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge: 'too-short' }, 'invalid_request'],
      [{ resource: 'mcp.gantry.test/mcp' }, 'invalid_target'],
      [{ resource: 'https://mcp.gantry.test/mcp#frag' }, 'invalid_target'],
      [{ resource: [RESOURCE, 'https://other.test/mcp'] }, 'invalid_target'],
      [{ scope: 'modules:read secrets:write' }, 'invalid_scope'],
      [{ scope: 'openid' }, 'invalid_scope'],
    ] as const) {
      const page = await getAuthorize(server.url, { ...valid(), ...change } as Record<string, string | string[] | undefined>);
      assert.equal(page.status, 302, JSON.stringify(change));
      assert.ok(page.location!.startsWith(`${REDIRECT}?`), page.location!);
      const params = callbackParams(page.location);
      assert.equal(params.error, error, JSON.stringify(change));
      assert.equal(typeof params.error_description, 'string');
      assert.equal(params.state, 'xyz');
      assert.equal(params.iss, server.url);
      assert.equal(params.code, undefined);
    }
  });

  it('CTX-EP-AUTHORIZATION-REQUEST: a valid request shows the login and consent page: client name (escaped), scopes, resource, username, password, Allow and Deny, a hidden transaction', async () => {
    const page = await getAuthorize(server.url, { ...valid(), scope: 'modules:read gates:run' });
    assert.equal(page.status, 200);
    assert.match(page.html, /<strong id="client">Agent &lt;One&gt;<\/strong>/);
    assert.match(page.html, /<ul id="scopes">[\s\S]*modules:read[\s\S]*gates:run[\s\S]*<\/ul>/);
    assert.match(page.html, new RegExp(`<code id="resource">${RESOURCE}</code>`));
    assert.match(page.html, /<input type="text" name="username" id="username"/);
    assert.match(page.html, /<input type="password" name="password" id="password"/);
    assert.match(page.html, /<button type="submit" name="decision" value="allow" id="allow">/);
    assert.match(page.html, /<button type="submit" name="decision" value="deny" id="deny"/);
    assert.match(page.html, /<form method="post" action="\/authorize\/decision"/);
    assert.ok(transactionOf(page.html).length >= 40, 'an unguessable transaction id');
    assert.match(page.headers.get('content-security-policy')!, /form-action 'self' http:\/\/127\.0\.0\.1:8976/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
  });

  it('CTX-EP-AUTHORIZATION-REQUEST: a wrong password shows the page again with a message and 401; the right one (the dev user dev/dev, or by e-mail) redirects with code, state and iss; the transaction is single-use', async () => {
    const page = await getAuthorize(server.url, valid());
    const transaction = transactionOf(page.html);
    const wrong = await postDecision(server.url, { transaction, username: 'alice', password: 'nope', decision: 'allow' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.html, /id="error">Wrong username or password/);
    assert.match(wrong.html, /id="username"[^>]*value="alice"/);
    const disabled = await postDecision(server.url, { transaction, username: 'gone', password: 'gone', decision: 'allow' });
    assert.equal(disabled.status, 403);
    const right = await postDecision(server.url, { transaction, username: 'alice@gantry.test', password: 'wonderland', decision: 'allow' });
    assert.equal(right.status, 302);
    const params = callbackParams(right.location);
    assert.deepEqual(Object.keys(params).sort(), ['code', 'iss', 'state']);
    assert.equal(params.state, 'xyz');
    assert.equal(params.iss, server.url);
    const again = await postDecision(server.url, { transaction, username: 'alice', password: 'wonderland', decision: 'allow' });
    assert.equal(again.status, 400, 'used up');
    assert.equal(again.location, null);
    const dev = await getAuthorize(server.url, valid());
    const devAnswer = await postDecision(server.url, { transaction: transactionOf(dev.html), username: 'dev', password: 'dev', decision: 'allow' });
    assert.ok(callbackParams(devAnswer.location).code, 'the default user logs in as dev/dev');
    assert.equal((await postDecision(server.url, { transaction: 'made-up', username: 'dev', password: 'dev', decision: 'allow' })).status, 400);
  });

  it('CTX-EP-AUTHORIZATION-REQUEST: Deny redirects with access_denied, state and iss; without state none is sent; a sole registered redirect URI may be left out', async () => {
    const page = await getAuthorize(server.url, valid());
    const denied = await postDecision(server.url, { transaction: transactionOf(page.html), decision: 'deny' });
    assert.equal(denied.status, 302);
    const params = callbackParams(denied.location);
    assert.deepEqual([params.error, params.state, params.iss, params.code], ['access_denied', 'xyz', server.url, undefined]);
    const single = server.registerClient({ redirectUris: ['https://single.example.com/cb'] }).id;
    const implicit = await getAuthorize(server.url, { ...valid(), client_id: single, redirect_uri: undefined, state: undefined });
    assert.equal(implicit.status, 200);
    const answer = await postDecision(server.url, { transaction: transactionOf(implicit.html), decision: 'deny' });
    assert.ok(answer.location!.startsWith('https://single.example.com/cb?'));
    assert.equal(callbackParams(answer.location).state, undefined);
  });

  it("CTX-EP-AUTHORIZATION-REQUEST: callbackIssuer sends another iss, or none with null (for tests of a client's RFC 9207 check)", async () => {
    for (const [callbackIssuer, expected] of [
      ['https://impostor.test', 'https://impostor.test'],
      [null, undefined],
    ] as const) {
      const other = await startOAuthServer({ callbackIssuer });
      try {
        const id = other.registerClient({ redirectUris: [REDIRECT] }).id;
        const page = await getAuthorize(other.url, { ...valid(), client_id: id });
        const answer = await postDecision(other.url, { transaction: transactionOf(page.html), username: 'dev', password: 'dev', decision: 'allow' });
        assert.equal(callbackParams(answer.location).iss, expected);
        const error = await getAuthorize(other.url, { ...valid(), client_id: id, code_challenge_method: 'plain' });
        assert.equal(callbackParams(error.location).iss, expected);
      } finally {
        await other.stop();
      }
    }
  });
});
