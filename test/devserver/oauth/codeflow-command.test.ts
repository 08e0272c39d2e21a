// `gantry dev oauth` in its own process prints the authorization code flow's endpoints, and they answer.
import assert from 'node:assert/strict';
import { startGantry, stopGantry } from '../../cli/gantry-process.js';
import { getJson } from './helpers.js';
import { REDIRECT, RESOURCE, redeem, registerJson, authorizeAndAllow } from './codeflow-helpers.js';

interface Info {
  url: string;
  endpoints: Record<string, string>;
  login: { username: string; password: string };
}

describe('devserver/oauth: gantry dev oauth for context-server clients', function () {
  this.timeout(60_000);

  it('CTX-ROLE-AUTH-SERVER CTX-STD-RFC8414 CTX-STD-RFC7591: --json names the metadata, authorization, registration, introspection and JWKS endpoints and the dev login; a client registers, signs in and gets a JWT', async () => {
    const { child, value: info } = await startGantry(['--json', 'dev', 'oauth', '--port', '0'], (stdout) => {
      try {
        return JSON.parse(stdout) as Info;
      } catch {
        return undefined;
      }
    });
    try {
      assert.deepEqual(info.endpoints.authorization, `${info.url}/authorize`);
      assert.deepEqual(info.endpoints.registration, `${info.url}/register`);
      assert.deepEqual(info.endpoints.introspection, `${info.url}/introspect`);
      assert.deepEqual(info.endpoints.jwks, `${info.url}/jwks`);
      assert.deepEqual(info.login, { username: 'dev', password: 'dev' });
      const metadata = (await getJson(info.endpoints.metadata!)).body;
      assert.equal(metadata.registration_endpoint, info.endpoints.registration);
      const registered = await registerJson(info.url, { redirect_uris: [REDIRECT], client_name: 'CLI test' });
      assert.equal(registered.status, 201);
      const flow = await authorizeAndAllow(info.url, {
        clientId: registered.body.client_id,
        resource: RESOURCE,
        username: info.login.username,
        password: info.login.password,
      });
      const tokens = await redeem(info.url, {
        client_id: registered.body.client_id,
        code: flow.code,
        code_verifier: flow.verifier,
        redirect_uri: REDIRECT,
        resource: RESOURCE,
      });
      assert.equal(tokens.status, 200);
      assert.equal(tokens.body.access_token.split('.').length, 3);
    } finally {
      await stopGantry(child);
    }
  });
});
