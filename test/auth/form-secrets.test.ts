// postForm registers the credentials it posts so no later line can show them — and only those: a protocol word in a
// field whose name looks like a credential's (token_type_hint=access_token, code_challenge_method=S256) stays readable.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { authHttpClient } from '../../lib/auth/index.js';
import { postForm } from '../../lib/oauth/index.js';
import { redact } from '../../lib/redact.js';

describe('postForm: what it registers as secret', () => {
  let server: Server;
  let url: string;
  const bodies: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"active":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/introspect`;
  });
  after(() => server.close());

  it('REDACT-FORM-FIELDS: the token, secret and code values are masked afterwards; token_type_hint and code_challenge_method values are not', async () => {
    const http = authHttpClient();
    try {
      const answer = await postForm(http, url, {
        token: 'ya29.form-secret-token-1',
        token_type_hint: 'access_token',
        client_secret: 'form-client-secret-2',
        code: 'form-auth-code-3',
        code_verifier: 'form-verifier-4',
        code_challenge_method: 'S256',
        grant_type: 'authorization_code',
      });
      assert.equal(answer.status, 200);
    } finally {
      http.close();
    }
    assert.match(bodies.at(-1)!, /token_type_hint=access_token/, 'the form was sent as given');
    for (const secret of ['ya29.form-secret-token-1', 'form-client-secret-2', 'form-auth-code-3', 'form-verifier-4']) {
      assert.doesNotMatch(redact(`a line with ${secret} in it`), new RegExp(secret.replace(/\./g, '\\.')), secret);
    }
    for (const word of ['access_token', 'S256', 'authorization_code']) assert.equal(redact(`hint ${word}`), `hint ${word}`, `${word} stays readable`);
  });
});
