// The device-login client (lib/auth) against the embedded authorization server (devserver/oauth, an independent
// implementation) over real sockets, in both dialects: codes, polling, every error of the spec's table.
import assert from 'node:assert/strict';
import { startOAuthServer, type OAuthServer, type OAuthServerOptions } from '../../devserver/oauth/index.js';
import {
  DeviceLoginError,
  authHttpClient,
  deviceLogin,
  discoverEndpoints,
  pollForTokens,
  renderPrompt,
  requestDeviceCode,
  resolveScopes,
  type DeviceCode,
  type PollEvent,
} from '../../lib/auth/index.js';
import { createLogger } from '../../lib/log.js';

const scopes = resolveScopes(['openid', 'email', 'video.readonly']);

async function withServer(
  options: OAuthServerOptions,
  run: (server: OAuthServer, client: { id: string; secret: string | null }) => Promise<void>,
  clientSpec: Parameters<OAuthServer['registerClient']>[0] = {},
): Promise<void> {
  const server = await startOAuthServer({ host: '127.0.0.1', port: 0, interval: 1, ...options });
  try {
    await run(server, server.registerClient(clientSpec));
  } finally {
    await server.stop();
  }
}

async function rejection(promise: Promise<unknown>): Promise<DeviceLoginError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DeviceLoginError, `expected an DeviceLoginError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the promise to be rejected');
}

/** Logs in, deciding on the code as soon as it is shown (after `delayMs`). */
async function loginDeciding(
  server: OAuthServer,
  client: { id: string; secret: string | null },
  decide: (code: DeviceCode) => void,
  delayMs = 0,
  events: PollEvent[] = [],
) {
  return deviceLogin({
    authUrl: server.url,
    clientId: client.id,
    clientSecret: client.secret ?? undefined,
    scopes,
    onCode: (code) => setTimeout(() => decide(code), delayMs).unref(),
    onPoll: (event) => events.push(event),
  });
}

describe('device login against the embedded authorization server', function () {
  this.timeout(60_000);

  it('DEV-FLOW-REQUEST-CODES DEV-EP-DEVICE-CODE DEV-DAR-VERIFICATION-URL DEV-DAR-EXPIRES-IN DEV-DAR-INTERVAL: Google dialect codes are read as sent', async () => {
    await withServer({ expiresIn: 600, interval: 3 }, async (server, client) => {
      const http = authHttpClient();
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        assert.equal(endpoints.source, 'openid-configuration');
        assert.equal(endpoints.deviceAuthorization, `${server.url}/device/code`);
        const before = Date.now();
        const code = await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
        assert.equal(code.verificationUrl, `${server.url}/device`);
        assert.equal(code.verificationUrlComplete, undefined);
        assert.equal(code.expiresIn, 600);
        assert.equal(code.interval, 3);
        assert.ok(code.expiresAt >= before + 600_000 && code.expiresAt <= Date.now() + 600_000);
        const sent = server.requestLog().find((entry) => entry.path === '/device/code');
        assert.ok(sent && !sent.tokenInQuery, 'the code request is a form body, nothing in the query');
      } finally {
        http.close();
      }
    });
  });

  it('DEV-DAR-USER-CODE DEV-LIM-USER-CODE-UNALTERED DEV-FLOW-DISPLAY DEV-LIM-URL-UNALTERED: a mixed-case user code and the URL are shown exactly as sent', async () => {
    await withServer({ userCodeCase: 'mixed' }, async (server, client) => {
      const http = authHttpClient();
      try {
        const code = await requestDeviceCode(http, await discoverEndpoints(http, server.url), { clientId: client.id, scopes });
        assert.match(code.userCode, /[a-z]/, 'the server was asked for a mixed-case code');
        assert.match(code.userCode, /[A-Z]/);
        const lines = renderPrompt(code, { columns: 200, rows: 80 });
        assert.ok(lines.includes(`    ${code.userCode}`), 'the code is printed unaltered on its own line');
        assert.ok(lines.includes(`    ${code.verificationUrl}`), 'the URL is printed unaltered');
        assert.ok(
          lines.some((line) => /[▀▄█]/.test(line)),
          'a QR code is drawn on a wide terminal',
        );
        const hidden = renderPrompt(code, { columns: 200, hideScheme: true });
        assert.ok(hidden.includes(`    ${code.verificationUrl.replace(/^http:\/\//, '')}`), 'the scheme may be hidden, nothing else changes');
        const narrow = renderPrompt(code, { columns: 20 });
        assert.ok(!narrow.some((line) => /[▀▄█]/.test(line)), 'no broken QR code on a narrow terminal');
        const short = renderPrompt(code, { columns: 200, rows: 12 });
        assert.ok(
          short.some((line) => line.startsWith('Code: ') && line.includes(code.userCode)),
          'the code is shown again below a QR code taller than the terminal',
        );
      } finally {
        http.close();
      }
    });
  });

  it('DEV-SCOPE-DEVICE-ALLOWED: a scope outside the allow-list is refused before anything is sent, naming the allowed ones', async () => {
    await withServer({}, async (server) => {
      assert.throws(
        () => resolveScopes(['openid', 'video.upload']),
        (error: Error & { exitCode?: number }) => {
          assert.equal(error.exitCode, 2);
          assert.match(error.message, /video\.upload/);
          assert.match((error as { hint?: string }).hint ?? '', /storage\.appdata/);
          return true;
        },
      );
      assert.throws(() => resolveScopes(['https://www.googleapis.com/auth/video.force-ssl']), /does not permit/);
      assert.deepEqual(resolveScopes(['openid email', 'video']), ['openid', 'email', 'https://www.googleapis.com/auth/video']);
      assert.equal(server.requestLog().length, 0);
    });
  });

  it('DEV-ST-PENDING DEV-ST-GRANTED DEV-FLOW-POLL-RESULT DEV-LIM-POLL-INTERVAL DEV-ERR-AUTHORIZATION-PENDING DEV-EP-POLL-TOKEN DEV-TOK-ACCESS-TOKEN DEV-TOK-TOKEN-TYPE DEV-TOK-SCOPE DEV-TOK-REFRESH-TOKEN: pending polls every interval, then tokens', async () => {
    await withServer({ interval: 1 }, async (server, client) => {
      const events: PollEvent[] = [];
      let shownAt = 0;
      const result = await loginDeciding(
        server,
        client,
        (code) => {
          shownAt = Date.now();
          setTimeout(() => server.approve(code.userCode), 2_300).unref();
        },
        0,
        events,
      );
      assert.ok(events.filter((e) => e.kind === 'pending').length >= 1, 'polled while pending');
      assert.equal(server.stats().slowDowns ?? 0, 0, 'never polled faster than the interval');
      assert.ok(Date.now() - shownAt >= 2_300);
      assert.equal(result.tokens.tokenType, 'Bearer');
      assert.ok(result.tokens.accessToken.length > 10);
      assert.ok(result.tokens.refreshToken, 'a device login always gets a refresh token');
      assert.equal(result.tokens.scope.split(' ').sort().join(' '), [...scopes].sort().join(' '));
      assert.equal(result.account?.email, 'dev@gantry.test');
      assert.ok(result.tokens.expiresAt > Date.now() + 3_000_000);
    });
  });

  it('DEV-ST-DENIED DEV-ERR-ACCESS-DENIED: a denied login ends with its own error and no tokens', async () => {
    await withServer({}, async (server, client) => {
      const error = await rejection(loginDeciding(server, client, (code) => server.deny(code.userCode), 500));
      assert.equal(error.code, 'AUTH_ACCESS_DENIED');
      assert.equal(error.exitCode, 1);
      assert.equal(error.status, 403);
      assert.equal(server.deviceCodes().filter((c) => c.state === 'granted').length, 0);
    });
  });

  it('DEV-ST-SLOW-DOWN DEV-ERR-SLOW-DOWN: slow_down adds 5 s to every later poll, and the client does not give up', async () => {
    await withServer({ interval: 1 }, async (server, client) => {
      const http = authHttpClient();
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        const code = await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
        // Another poller of the same code (a second copy of the script) polls half a second before ours: our first
        // poll is then too soon for the server.
        setTimeout(() => {
          void fetch(endpoints.token, {
            method: 'POST',
            body: new URLSearchParams({
              client_id: client.id,
              client_secret: client.secret!,
              device_code: code.deviceCode,
              grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
            }),
          });
        }, 500).unref();
        const events: PollEvent[] = [];
        const polls: number[] = [];
        const tokens = await pollForTokens(http, endpoints, code, {
          clientId: client.id,
          clientSecret: client.secret ?? undefined,
          onPoll: (event) => {
            events.push(event);
            polls.push(Date.now());
            if (events.length === 2) server.approve(code.userCode);
          },
        });
        assert.equal(events[0]!.kind, 'slow_down', JSON.stringify(events));
        assert.equal(events[0]!.nextInMs, 6_000, 'interval 1 s + 5 s');
        assert.equal(events[1]!.kind, 'pending', `polling went on: ${JSON.stringify(events)}`);
        assert.equal(events[1]!.nextInMs, 6_000, 'with the interval still grown');
        assert.ok(polls[1]! - polls[0]! >= 5_900, `the poll after slow_down waited ${polls[1]! - polls[0]!} ms`);
        assert.equal(server.stats().slowDowns, 1, 'no poll was too fast after that');
        assert.ok(tokens.accessToken);
      } finally {
        http.close();
      }
    });
  });

  it('DEV-ST-EXPIRED DEV-LIM-CODE-VALIDITY: polling stops at expires_in with "the code expired, run login again" (AMB-17)', async () => {
    await withServer({ interval: 1, expiresIn: 3 }, async (server, client) => {
      const started = Date.now();
      const error = await rejection(loginDeciding(server, client, () => {}));
      assert.equal(error.code, 'AUTH_EXPIRED');
      assert.match(error.message, /expired.*gantry auth login/);
      const took = Date.now() - started;
      assert.ok(took >= 2_500 && took < 6_000, `stopped after ${took} ms`);
    });
  });

  it('DEV-ERR-CODE-QUOTA DEV-LIM-CODE-QUOTA DEV-ERR-BODY-SHAPE: rate_limit_exceeded is backed off and retried, then reported as a quota error (exit 3)', async () => {
    await withServer({ codeQuota: { requests: 1, windowSeconds: 60 } }, async (server, client) => {
      const http = authHttpClient();
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
        const waits: number[] = [];
        const error = await rejection(
          requestDeviceCode(http, endpoints, {
            clientId: client.id,
            scopes,
            quotaBackoff: { retries: 2, initialMs: 100, maxMs: 400 },
            onQuotaWait: (ms) => waits.push(ms),
          }),
        );
        assert.equal(error.code, 'AUTH_QUOTA');
        assert.equal(error.exitCode, 3);
        assert.match(error.message, /quota/);
        // The server says Retry-After (the rest of its window): honoured, up to the longest wait allowed.
        assert.deepEqual(waits, [400, 400]);
        assert.equal(server.requestLog().filter((e) => e.path === '/device/code').length, 4, 'one granted, then three refused');
      } finally {
        http.close();
      }
    });
  });

  it('DEV-ERR-INVALID-CLIENT DEV-AUTH-CLIENT-TYPE DEV-CLIENT-CREDENTIALS: a client of the wrong type says to create a TVs and Limited Input client', async () => {
    await withServer(
      {},
      async (server, client) => {
        const error = await rejection(loginDeciding(server, client, (code) => server.approve(code.userCode), 200));
        assert.equal(error.code, 'AUTH_INVALID_CLIENT');
        assert.match(error.hint ?? '', /TVs and Limited Input/);
        assert.ok(!error.message.includes(client.secret!), 'the secret is never in the message');
      },
      { type: 'web' },
    );
  });

  it('DEV-ERR-ORG-INTERNAL: an internal client approved by an outside account gets its own error', async () => {
    await withServer(
      {},
      async (server, client) => {
        const error = await rejection(loginDeciding(server, client, (code) => server.approve(code.userCode), 200));
        assert.equal(error.code, 'AUTH_ORG_INTERNAL');
        assert.equal(error.status, 403);
      },
      { orgInternal: 'example.org' },
    );
  });

  it('DEV-ERR-ADMIN-POLICY-ENFORCED: a scope blocked by the administrator gets its own error', async () => {
    await withServer(
      {},
      async (server, client) => {
        const error = await rejection(loginDeciding(server, client, (code) => server.approve(code.userCode), 200));
        assert.equal(error.code, 'AUTH_ADMIN_POLICY');
        assert.equal(error.status, 400);
      },
      { adminPolicyScopes: ['https://www.googleapis.com/auth/video.readonly'] },
    );
  });

  it('DEV-ERR-INVALID-GRANT: an unknown or already claimed device code is invalid_grant, its own error', async () => {
    await withServer({ interval: 1 }, async (server, client) => {
      const http = authHttpClient();
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        const code = await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
        server.approve(code.userCode);
        await pollForTokens(http, endpoints, code, { clientId: client.id, clientSecret: client.secret ?? undefined });
        const again = await rejection(pollForTokens(http, endpoints, code, { clientId: client.id, clientSecret: client.secret ?? undefined }));
        assert.equal(again.code, 'AUTH_INVALID_GRANT');
        const forged = await rejection(
          pollForTokens(http, endpoints, { ...code, deviceCode: 'AH-1Ng2Vgw-forged' }, { clientId: client.id, clientSecret: client.secret ?? undefined }),
        );
        assert.equal(forged.code, 'AUTH_INVALID_GRANT');
      } finally {
        http.close();
      }
    });
  });

  it('DEV-ERR-UNSUPPORTED-GRANT-TYPE: each error of the table maps to its own code and advice', async () => {
    const { oauthError } = await import('../../lib/auth/errors.js');
    const oauthErrorFor = (error: string) => oauthError(error, undefined, 400);
    const codes = ['access_denied', 'admin_policy_enforced', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'org_internal', 'expired_token'].map(
      (e) => oauthErrorFor(e).code,
    );
    assert.equal(new Set(codes).size, codes.length, 'seven errors, seven codes');
    assert.match(oauthErrorFor('unsupported_grant_type').hint ?? '', /device authorization grant/);
  });

  it("DEV-EP-DEVICE-CODE AMB-14: the metadata's device_authorization_endpoint wins over {auth_url}/device/code; without metadata the spec's paths are used", async () => {
    await withServer({ devicePath: '/oauth2/device' }, async (server, client) => {
      const http = authHttpClient();
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        assert.equal(endpoints.deviceAuthorization, `${server.url}/oauth2/device`);
        await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
        assert.ok(server.requestLog().some((e) => e.path === '/oauth2/device' && e.status === 200));
      } finally {
        http.close();
      }
    });
    await withServer({ discovery: false }, async (server, client) => {
      const http = authHttpClient();
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        assert.equal(endpoints.source, 'defaults');
        assert.equal(endpoints.deviceAuthorization, `${server.url}/device/code`);
        assert.equal(endpoints.token, `${server.url}/token`);
        assert.equal(endpoints.revocation, `${server.url}/revoke`);
        await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
      } finally {
        http.close();
      }
    });
  });

  it('DEV-DAR-VERIFICATION-URL DEV-ERR-SLOW-DOWN (RFC 8628 dialect): verification_uri and _complete, 400 errors, the same client logs in', async () => {
    await withServer({ dialect: 'rfc8628' }, async (server, client) => {
      const events: PollEvent[] = [];
      let shown: DeviceCode | undefined;
      const result = await loginDeciding(
        server,
        client,
        (code) => {
          shown = code;
          setTimeout(() => server.approve(code.userCode), 1_500).unref();
        },
        0,
        events,
      );
      assert.ok(shown?.verificationUrlComplete?.includes(encodeURIComponent(shown.userCode)) || shown?.verificationUrlComplete?.includes(shown.userCode));
      assert.ok(
        events.some((e) => e.kind === 'pending'),
        'a 400 authorization_pending is pending too',
      );
      assert.ok(result.tokens.accessToken);
    });
  });

  it('AMB-13: a public client (no secret) logs in where the server allows it', async () => {
    await withServer(
      { dialect: 'rfc8628' },
      async (server, client) => {
        assert.equal(client.secret, null);
        const result = await loginDeciding(server, client, (code) => server.approve(code.userCode), 1_200);
        assert.ok(result.tokens.accessToken);
      },
      { secret: null },
    );
  });

  it('DEV-CLIENT-NO-SECRETS: tokens, device codes and the client secret never reach the log or an error', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
    await withServer({}, async (server, client) => {
      const http = authHttpClient({ logger });
      try {
        const endpoints = await discoverEndpoints(http, server.url);
        const code = await requestDeviceCode(http, endpoints, { clientId: client.id, scopes });
        server.approve(code.userCode);
        const tokens = await pollForTokens(http, endpoints, code, { clientId: client.id, clientSecret: client.secret ?? undefined });
        const error = await rejection(pollForTokens(http, endpoints, code, { clientId: client.id, clientSecret: client.secret ?? undefined }));
        const seen = [...lines, error.message, error.hint ?? '', JSON.stringify(error)].join('\n');
        for (const secret of [tokens.accessToken, tokens.refreshToken!, code.deviceCode, client.secret!])
          assert.ok(!seen.includes(secret), 'a credential leaked');
      } finally {
        http.close();
      }
    });
  });
});
