// Every Gantry client that posts, twice in a row, against a plain HTTP/1.1 server that ends connections as real ones
// do (test/peers/closing-http.ts): after a request that says `Connection: close` without echoing it, right after every
// answer without saying so, and at the second request of a connection without answering. Both posts of each client
// succeed where the server closes between requests — no client sends on a connection the server closed, none bypasses
// the core's connection policy — and where the server drops a post it has read, none sends it a second time, except
// the posts that may be repeated (`repeatable`: device authorization, revocation, introspection), sent once more.
import assert from 'node:assert/strict';
import { createHttpClient, noRetry } from '../../lib/http/index.js';
import { authHttpClient } from '../../lib/auth/index.js';
import { introspectionRequest } from '../../lib/oauth/index.js';
import { requestDeviceCode } from '../../lib/auth/device.js';
import { refreshTokens, revokeToken } from '../../lib/auth/tokens.js';
import type { AuthEndpoints } from '../../lib/auth/discovery.js';
import type { TokenSet } from '../../lib/auth/store/types.js';
import { registerClient } from '../../lib/mcp/client/registration.js';
import { authorizedFetch, contextServerRetry } from '../../lib/mcp/client/fetch.js';
import { PlatformClient } from '../../lib/platform/client.js';
import { createStorageTransport } from '../../lib/storage/transport.js';
import { createSecretsClient } from '../../lib/secrets/client.js';
import { createWebDriverClient } from '../../lib/automation/client.js';
import { startClosingServer, type CloseMode, type ClosingAnswer, type ClosingServer } from '../peers/closing-http.js';

/** The clients of one test, made on first use and closed after it. */
class Kit {
  readonly #closers: Array<() => void> = [];
  readonly #made = new Map<string, unknown>();
  constructor(readonly url: string) {}
  #make<T>(name: string, make: () => T, close: (made: T) => void): T {
    if (!this.#made.has(name)) {
      const made = make();
      this.#made.set(name, made);
      this.#closers.push(() => close(made));
    }
    return this.#made.get(name) as T;
  }
  get auth() {
    return this.#make(
      'auth',
      () => authHttpClient(),
      (http) => http.close(),
    );
  }
  get mcpServer() {
    return this.#make(
      'mcpServer',
      () => createHttpClient({ retry: noRetry, timeouts: { connect: 5_000, response: 10_000 }, maxRedirects: 0 }),
      (http) => http.close(),
    );
  }
  get mcpClient() {
    return this.#make(
      'mcpClient',
      () => createHttpClient({ retry: contextServerRetry }),
      (http) => http.close(),
    );
  }
  get platform() {
    return this.#make(
      'platform',
      () => new PlatformClient({ baseUrl: this.url, token: 'ghs_posting-clients-test', env: {} }),
      () => undefined,
    );
  }
  get storage() {
    return this.#make(
      'storage',
      () => createStorageTransport({ baseUrl: this.url, token: 'ya29.storage' }),
      (transport) => transport.close(),
    );
  }
  get secrets() {
    return this.#make(
      'secrets',
      () => createSecretsClient({ address: this.url, token: 's.posting-clients-test' }),
      () => undefined,
    );
  }
  get webdriver() {
    return this.#make(
      'webdriver',
      () => createWebDriverClient({ url: this.url }),
      (client) => client.close(),
    );
  }
  close(): void {
    for (const close of this.#closers) close();
  }
}

interface Row {
  client: string;
  /** The path the client posts to. */
  path: string;
  answer: ClosingAnswer;
  post: (kit: Kit) => Promise<void>;
  /** Sending it twice does no more than once: a reused connection dropped unanswered costs one resend. */
  repeatable?: true;
}

const endpoints = (url: string): AuthEndpoints => ({
  authUrl: url,
  issuer: undefined,
  deviceAuthorization: `${url}/device/code`,
  token: `${url}/token`,
  revocation: `${url}/revoke`,
  userinfo: undefined,
  jwksUri: undefined,
  source: 'defaults',
});
const tokens = { accessToken: 'ya29.old', tokenType: 'Bearer', expiresAt: 0, scope: 'openid', obtainedAt: 0, refreshToken: '1//refresh' } as TokenSet;

/** The clients that post, as `grep -rn "method: 'POST'\|postForm(\|request('POST'" lib` finds them (outside devserver). */
const rows: Row[] = [
  {
    client: 'auth: device authorization (lib/auth/device.ts)',
    path: '/device/code',
    answer: { body: { device_code: 'dc', user_code: 'ABCD-EFGH', verification_url: 'http://127.0.0.1/device', expires_in: 600, interval: 5 } },
    post: async (kit) => void (await requestDeviceCode(kit.auth, endpoints(kit.url), { clientId: 'client', scopes: ['openid'] })),
    repeatable: true,
  },
  {
    client: 'auth: token, refresh grant (lib/auth/tokens.ts; the device poll posts the same way)',
    path: '/token',
    answer: { body: { access_token: 'ya29.new', token_type: 'Bearer', expires_in: 3600 } },
    post: async (kit) => void (await refreshTokens(kit.auth, endpoints(kit.url), { clientId: 'client' }, tokens)),
  },
  {
    client: 'auth: revocation (lib/auth/tokens.ts)',
    path: '/revoke',
    answer: { status: 200 },
    post: async (kit) => assert.equal(await revokeToken(kit.auth, endpoints(kit.url), 'ya29.revoked'), 'revoked'),
    repeatable: true,
  },
  {
    client: 'mcp server: token introspection (lib/mcp/server/tokens.ts, with its own client)',
    path: '/introspect',
    answer: { body: { active: true } },
    post: async (kit) => {
      const config = { http: kit.mcpServer, server: { token_endpoint: `${kit.url}/token`, introspection_endpoint: `${kit.url}/introspect` } };
      assert.equal((await introspectionRequest(config, 'ya29.x')).status, 200);
    },
    repeatable: true,
  },
  {
    client: 'mcp client: dynamic registration (lib/mcp/client/registration.ts)',
    path: '/register',
    answer: { status: 201, body: { client_id: 'gantry-1' } },
    post: async (kit) => {
      const server = {
        issuer: kit.url,
        metadataUrl: `${kit.url}/.well-known/oauth-authorization-server`,
        metadata: { issuer: kit.url, registration_endpoint: `${kit.url}/register` },
      } as unknown as Parameters<typeof registerClient>[1];
      assert.equal((await registerClient(kit.mcpClient, server, 'http://127.0.0.1:1/callback')).clientId, 'gantry-1');
    },
  },
  {
    client: 'mcp client: JSON-RPC over Streamable HTTP (lib/mcp/client/fetch.ts)',
    path: '/mcp',
    answer: { body: { jsonrpc: '2.0', id: 1, result: {} } },
    post: async (kit) => {
      const authorizer = {
        resource: `${kit.url}/mcp`,
        accessToken: async () => 'ya29.ctx',
        unauthorized: async () => undefined,
        insufficientScope: async () => undefined,
        grantedScopes: () => [],
      };
      const response = await authorizedFetch({ http: kit.mcpClient, authorizer })(`${kit.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(response.status, 200);
      await response.text();
    },
  },
  {
    client: 'platform: a commit status (lib/platform/client.ts)',
    path: '/repos/gantry/demo/statuses/abc',
    answer: { status: 201, body: { id: 1, state: 'success' } },
    post: async (kit) => assert.equal((await kit.platform.request('POST', '/repos/gantry/demo/statuses/abc', { body: { state: 'success' } })).status, 201),
  },
  {
    client: 'webhooks: a deployment protection review (lib/webhooks/protection.ts, through the platform client)',
    path: '/repos/gantry/demo/actions/runs/1/deployment_protection_rule',
    answer: { status: 204 },
    post: async (kit) =>
      void (await kit.platform.request('POST', `${kit.url}/repos/gantry/demo/actions/runs/1/deployment_protection_rule`, {
        body: { environment_name: 'production', state: 'approved', comment: 'ok' },
        creates: false,
      })),
  },
  {
    client: 'storage: a file created (lib/storage/transport.ts)',
    path: '/storage/v2/files',
    answer: { body: { kind: 'drive#file', id: 'f1', title: 'notes' } },
    post: async (kit) =>
      assert.equal((await kit.storage.request<{ id: string }>({ method: 'POST', path: '/storage/v2/files', json: { title: 'notes' } })).body.id, 'f1'),
  },
  {
    client: 'secrets: a write (lib/secrets/client.ts)',
    path: '/v1/secret/data/app',
    answer: { body: { data: { version: 1 } } },
    post: async (kit) => void (await kit.secrets.write('secret/data/app', { data: { a: 1 } })),
  },
  {
    client: 'automation: a WebDriver session (lib/automation/client.ts)',
    path: '/session',
    answer: { body: { value: { sessionId: 's1', capabilities: { browserName: 'chrome' } } } },
    post: async (kit) => assert.equal((await kit.webdriver.newSession({})).id, 's1'),
  },
];

describe('every client that posts, against servers that end connections (HTTP core connection policy)', function () {
  this.timeout(30_000);
  const modes: Array<[CloseMode, string]> = [
    ['when-asked', 'closes after a request that says Connection: close, without echoing it'],
    ['after-answer', 'closes every connection right after answering, without saying so'],
    ['drop-reused', 'reads a second request on a connection, then ends it unanswered'],
  ];
  for (const [mode, what] of modes) {
    describe(`a server that ${what}`, () => {
      let server: ClosingServer;
      let answers = new Map<string, ClosingAnswer>();
      before(async () => {
        server = await startClosingServer(
          mode,
          (request) => answers.get(request.path.split('?')[0]!) ?? { status: 404, body: { error: `no answer for ${request.path}` } },
        );
      });
      after(() => server.close());

      for (const row of rows) {
        it(`HTTP-CONN-CLOSE-POLICY: ${row.client} posts twice in a row`, async () => {
          answers = new Map([[row.path, row.answer]]);
          const before = server.requests.length;
          const kit = new Kit(server.url);
          try {
            await row.post(kit);
            if (mode === 'drop-reused' && !row.repeatable) {
              // The server read the second post and dropped its connection unanswered: it may have acted on it, so no
              // client sends it again by itself (a POST is not idempotent) — the failure is said, as a network error.
              await assert.rejects(row.post(kit), (error: Error) => /ECONNRESET|socket hang up|connection/i.test(`${error.name} ${error.message}`));
            } else {
              await row.post(kit);
            }
          } finally {
            kit.close();
          }
          const seen = server.requests.slice(before);
          const posted = seen.filter((request) => request.method === 'POST' && request.path.split('?')[0] === row.path);
          // Each post reaches the server once — a repeatable one dropped unanswered once more, on a new connection.
          const resent = mode === 'drop-reused' && row.repeatable ? 1 : 0;
          assert.equal(posted.length, 2 + resent, `posts that reached the server: ${posted.map((request) => `#${request.connection}`).join(' ')}`);
          if (resent) assert.notEqual(posted[2]!.connection, posted[1]!.connection, 'the resend went on a new connection');
          if (mode === 'after-answer') assert.equal(new Set(posted.map((request) => request.connection)).size, 2, 'a connection of its own each time');
          // Nothing ever followed, on its connection, a request that said Connection: close.
          for (const [index, request] of seen.entries()) {
            if (request.headers.connection !== 'close') continue;
            assert.ok(
              !seen.slice(index + 1).some((later) => later.connection === request.connection),
              `a request followed ${request.method} ${request.path} on its closed connection`,
            );
          }
        });
      }
    });
  }
});
