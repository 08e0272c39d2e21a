// An independent client against the embedded platform API: Octokit with @octokit/plugin-throttling reads its headers
// and bodies as GitHub's — a primary limit calls onRateLimit with the wait until x-ratelimit-reset, a secondary one
// onSecondaryRateLimit with retry-after — and its retries then succeed.
import assert from 'node:assert/strict';
import { Octokit } from '@octokit/core';
import { throttling } from '@octokit/plugin-throttling';
import { startPlatformServer, type PlatformServer } from '../../../devserver/platform/index.js';

const Throttled = Octokit.plugin(throttling);

describe('devserver/platform: Octokit with @octokit/plugin-throttling understands it', function () {
  this.timeout(30_000);
  let server: PlatformServer;
  afterEach(() => server?.stop());

  it('RATE-ERR-PRIMARY: a spent primary budget (403, remaining 0) calls onRateLimit with the seconds to x-ratelimit-reset; the retry after it succeeds', async () => {
    server = await startPlatformServer({ windowScale: 0.001, limits: { user: 3 }, tokens: [{ token: 'ghp_octokit', kind: 'personal', login: 'octo' }] });
    const calls: number[] = [];
    const octokit = new Throttled({
      auth: 'ghp_octokit',
      baseUrl: server.url,
      throttle: {
        onRateLimit: (retryAfter: number) => {
          calls.push(retryAfter);
          return calls.length === 1;
        },
        onSecondaryRateLimit: () => assert.fail('no secondary limit here'),
      },
    });
    for (let i = 0; i < 4; i++) {
      const answer = await octokit.request('GET /repos/{owner}/{repo}', { owner: 'gantry', repo: 'demo' });
      assert.equal(answer.status, 200);
    }
    assert.equal(calls.length, 1);
    assert.ok(calls[0]! >= 0 && calls[0]! <= 6, `retryAfter ${calls[0]}`);
    assert.equal(server.violations().byKind.primary, 1);
  });

  it('RATE-ERR-SECONDARY RATE-ERR-SECONDARY-RETRY-AFTER: a points refusal (403 naming the secondary limit, retry-after) calls onSecondaryRateLimit with retry-after; the retry after it succeeds', async () => {
    server = await startPlatformServer({
      windowScale: 0.02,
      limits: { pointsPerMinute: 3 },
      tokens: [{ token: 'ghp_octokit', kind: 'personal', login: 'octo' }],
    });
    const calls: number[] = [];
    const octokit = new Throttled({
      auth: 'ghp_octokit',
      baseUrl: server.url,
      throttle: {
        onRateLimit: () => assert.fail('no primary limit here'),
        onSecondaryRateLimit: (retryAfter: number) => {
          calls.push(retryAfter);
          return calls.length === 1;
        },
      },
    });
    for (let i = 0; i < 4; i++) {
      const answer = await octokit.request('GET /repos/{owner}/{repo}', { owner: 'gantry', repo: 'demo' });
      assert.equal(answer.status, 200);
    }
    assert.equal(calls.length, 1);
    assert.ok(calls[0]! >= 1 && calls[0]! <= 2, `retry-after ${calls[0]}: whole seconds within the scaled minute of 1.2 s`);
    assert.equal(server.violations().byKind.points, 1);
  });
});
