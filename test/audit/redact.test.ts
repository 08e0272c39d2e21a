import assert from 'node:assert/strict';
import { createHttpClient, HttpError, noRetry, REDACTED } from '../../lib/http/index.js';
import { redact, redactUrl, registerSecret } from '../../lib/redact.js';
import { sendJson, startHttpPeer, type HttpPeer } from '../peers/http.js';

// Audit of lib/redact: credentials in the shapes they take when a server, a proxy or a child process echoes them
// back into an error message or a log line. Each canary must vanish; the text around it must stay readable.
function assertMasked(text: string, canary: string, expected?: string): void {
  const out = redact(text);
  assert.ok(!out.includes(canary), `${canary} survived: ${out}`);
  assert.ok(out.includes(REDACTED), out);
  assert.equal(redact(out), out, 'redacting twice changes nothing');
  if (expected !== undefined) assert.equal(out, expected);
}

describe('audit: redaction of echoed credentials (lib/redact)', () => {
  it('SEC-AUTH-TOKEN-HEADER / SEC-AUTH-BEARER: token headers quoted as JSON or in single quotes are masked, in any letter case', () => {
    assertMasked('upstream said {"X-Secrets-Token":"canary-5f1e-a1"}', 'canary-5f1e-a1', `upstream said {"X-Secrets-Token":"${REDACTED}"}`);
    assertMasked('{"headers": {"authorization": "Bearer canary-5f1e-a2"}}', 'canary-5f1e-a2', `{"headers": {"authorization": "Bearer ${REDACTED}"}}`);
    assertMasked("{'x-api-key': 'canary-5f1e-a3'}", 'canary-5f1e-a3');
    assertMasked('X-SECRETS-TOKEN: canary-5f1e-a4', 'canary-5f1e-a4', `X-SECRETS-TOKEN: ${REDACTED}`);
    assertMasked('authorization: bEaReR canary-5f1e-a5', 'canary-5f1e-a5', `authorization: bEaReR ${REDACTED}`);
  });

  it('SEC-AUTH-BEARER: the credential after any registered HTTP authentication scheme is masked, not the scheme', () => {
    assertMasked('Authorization: Negotiate canary-5f1e-b1', 'canary-5f1e-b1', `Authorization: Negotiate ${REDACTED}`);
    assertMasked('Proxy-Authorization: NTLM canary-5f1e-b2', 'canary-5f1e-b2', `Proxy-Authorization: NTLM ${REDACTED}`);
    assertMasked('Authorization: DPoP canary-5f1e-b3', 'canary-5f1e-b3');
  });

  it("placeholders and a scheme named alone survive: Gantry's own hints stay readable", () => {
    for (const text of [
      'must be x-secrets-token or authorization (Authorization: Bearer), got "cookie"',
      'send Authorization: Bearer <token>',
      'set X-Secrets-Token: <token>.',
      'authorization=Basic',
    ]) {
      assert.equal(redact(text), text);
    }
    assertMasked('Authorization: Bearer canary-5f1e-p1)', 'canary-5f1e-p1');
    assertMasked('X-Secrets-Token: <canary-5f1e-p2', 'canary-5f1e-p2');
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: a bearer token quoted in prose is masked; prose about bearer tokens is left alone', () => {
    assertMasked('rejected: invalid Bearer eyJhbGciOiJIUzI1NiJ9.canary5f1e', 'eyJhbGciOiJIUzI1NiJ9.canary5f1e', `rejected: invalid ${'Bearer'} ${REDACTED}`);
    assert.equal(redact('send the token as a Bearer token, not as a query parameter'), 'send the token as a Bearer token, not as a query parameter');
  });

  it('every pair of a Cookie header is masked, not only the first', () => {
    assertMasked('Cookie: theme=dark; session=canary-5f1e-c1', 'canary-5f1e-c1');
    assertMasked('{"set-cookie": "sid=canary-5f1e-c2; Path=/; HttpOnly", "x": 1}', 'canary-5f1e-c2', `{"set-cookie": "${REDACTED}", "x": 1}`);
  });

  it('URL userinfo is masked when the user is empty or the password holds "@", as URL parsers read it', () => {
    assertMasked('GET https://:canary-5f1e-d1@registry.example.com/v1 failed', 'canary-5f1e-d1', `GET https://${REDACTED}@registry.example.com/v1 failed`);
    assertMasked('git clone https://bot:p@ss-canary-5f1e-d2@git.example.com/r.git', 'canary-5f1e-d2', `git clone https://${REDACTED}@git.example.com/r.git`);
    assert.equal(redact('mail ops@example.com about https://example.com/a@b'), 'mail ops@example.com about https://example.com/a@b');
    assert.equal(redactUrl('https://:canary-5f1e-d3@h.example/x'), `https://${REDACTED}@h.example/x`);
  });

  it('DEV-AUTH-ACCESS-TOKEN-TRANSPORT: credential parameters in a fragment or under common names are masked', () => {
    assertMasked(
      'redirected to https://app.example/cb#access_token=canary-5f1e-e1&state=1',
      'canary-5f1e-e1',
      `redirected to https://app.example/cb#access_token=${REDACTED}&state=1`,
    );
    assertMasked('GET https://h.example/x?api_key=canary-5f1e-e2&q=1', 'canary-5f1e-e2');
    assertMasked('GET https://h.example/x?refresh_token=canary-5f1e-e3', 'canary-5f1e-e3');
    assert.equal(redactUrl('https://h.example/cb#id_token=canary-5f1e-e4'), `https://h.example/cb#id_token=${REDACTED}`);
  });

  it('credential-named JSON fields of an echoed body and echoed environment assignments are masked', () => {
    assertMasked(
      '{"auth":{"client_token":"hvs.canary\\"5f1e-f1","policies":["default"]}}',
      'canary',
      `{"auth":{"client_token":"${REDACTED}","policies":["default"]}}`,
    );
    assertMasked('{"password": "canary-5f1e-f2", "username": "alice"}', 'canary-5f1e-f2', `{"password": "${REDACTED}", "username": "alice"}`);
    assertMasked(
      'env: SECRETS_TOKEN=canary-5f1e-f3 SECRETS_ADDR=http://127.0.0.1:8200',
      'canary-5f1e-f3',
      `env: SECRETS_TOKEN=${REDACTED} SECRETS_ADDR=http://127.0.0.1:8200`,
    );
    assertMasked('GANTRY_TOKEN_registry_example_com=canary-5f1e-f4', 'canary-5f1e-f4');
    assert.equal(redact('try: SECRETS_TOKEN=<the dev token> gantry secrets get x'), 'try: SECRETS_TOKEN=<the dev token> gantry secrets get x');
  });

  it('a registered secret is masked also in its JSON-escaped and URL-encoded forms', () => {
    const secret = 'canary"5f1e/g1+p@ss';
    registerSecret(secret);
    assertMasked(`body: ${JSON.stringify({ value: secret })}`, 'canary');
    assertMasked(`GET https://h.example/x?q=${encodeURIComponent(secret)}`, 'canary');
  });

  describe('through the HTTP core, against a real server that echoes what it got', () => {
    let peer: HttpPeer;
    before(async () => {
      peer = await startHttpPeer((req, res) =>
        sendJson(res, 400, { errors: [`rejected request: ${JSON.stringify({ headers: req.headers, body: req.body })}`] }),
      );
    });
    after(async () => {
      await peer.close();
    });

    it('SEC-AUTH-TOKEN-HEADER: a 400 that echoes the request headers and a login body as JSON leaks neither token nor password', async () => {
      const token = 'canary-5f1e-h1-token';
      const password = 'canary-5f1e-h1-password';
      const client = createHttpClient({ baseUrl: peer.url, retry: noRetry, headers: { 'X-Secrets-Token': token } });
      try {
        await assert.rejects(client.request({ method: 'POST', url: '/v1/auth/userpass/login/alice', json: { password } }), (error: HttpError) => {
          const everything = `${error.message} ${JSON.stringify(error.errors)} ${error.rawBody ?? ''}`;
          assert.ok(!everything.includes(token), everything);
          assert.ok(!everything.includes(password), everything);
          assert.match(everything, /rejected request/);
          return true;
        });
      } finally {
        client.close();
      }
    });
  });
});

describe('redaction in a long-running process', () => {
  it('remembers the most recent secrets without bound growth: the oldest are forgotten past 4,096 forms (a token and its JSON and URL-encoded forms), the newest always masked', async () => {
    const { redact, registerSecret } = await import('../../lib/redact.js');
    const first = `first-secret-${Date.now()}-aaaa`;
    registerSecret(first);
    assert.equal(redact(`x ${first} y`), 'x [REDACTED] y');
    const many = Array.from({ length: 5000 }, (_, i) => `rotating-secret-${i}-${Date.now()}`);
    for (const value of many) registerSecret(value);
    assert.equal(redact(`x ${many.at(-1)} y`), 'x [REDACTED] y');
    assert.equal(redact(`x ${many[4000]} y`), 'x [REDACTED] y');
    assert.equal(redact(`x ${first} y`), `x ${first} y`, 'the oldest was forgotten');
    // Registering again makes a secret the newest.
    registerSecret(first);
    assert.equal(redact(`x ${first} y`), 'x [REDACTED] y');
  });
});
