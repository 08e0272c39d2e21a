// Commit statuses and paging through the client, against the scripted stand-in for the platform.
import assert from 'node:assert/strict';
import { ExitCode, UsageError } from '../../lib/errors.js';
import { MemoryBudgetStore, PlatformClient, createCommitStatus, listCommitStatuses } from '../../lib/platform/index.js';
import { silentLogger } from '../../lib/log.js';
import { startMockPlatform, type MockPlatform } from './helpers/mock-platform.js';
import { VirtualClock } from './helpers/virtual-clock.js';

const sha = '0123456789abcdef0123456789abcdef01234567';

describe('platform commit statuses and paging', function () {
  this.timeout(20_000);
  let peer: MockPlatform;
  let client: PlatformClient;
  beforeEach(async () => {
    const clock = new VirtualClock();
    peer = await startMockPlatform(clock, (s) => {
      if (s.method === 'POST')
        return { status: 201, body: { id: 1, ...JSON.parse(s.body), creator: { login: 'gantry[bot]' }, created_at: '2024-01-01T00:00:00Z' } };
      const page = Number(new URL(s.url, 'http://x').searchParams.get('page') ?? '1');
      const next =
        page < 3 ? { link: `<${peer.url}${s.path}?per_page=2&page=${page + 1}>; rel="next", <${peer.url}${s.path}?per_page=2&page=3>; rel="last"` } : undefined;
      return {
        status: 200,
        body: [
          { id: page * 10, state: 'success', context: `c${page}a` },
          { id: page * 10 + 1, state: 'pending', context: `c${page}b` },
        ],
        ...(next ? { headers: next } : {}),
      };
    });
    client = new PlatformClient({
      baseUrl: peer.url,
      token: 'ghs_statustoken000000000000000000000',
      env: {},
      clock,
      store: new MemoryBudgetStore(),
      logger: silentLogger,
      proxy: {},
    });
  });
  afterEach(async () => {
    client.close();
    await peer.close();
  });

  it('createCommitStatus posts state, context, description and target_url to /repos/{owner}/{repo}/statuses/{sha}', async () => {
    const status = await createCommitStatus(client, {
      repository: 'octo-org/site',
      sha,
      state: 'success',
      context: 'gantry/gate',
      description: 'performance 0.93 ≥ 0.90',
      targetUrl: 'https://ci.example/run/1',
    });
    assert.equal(peer.seen[0]!.method, 'POST');
    assert.equal(peer.seen[0]!.path, `/repos/octo-org/site/statuses/${sha}`);
    assert.deepEqual(JSON.parse(peer.seen[0]!.body), {
      state: 'success',
      context: 'gantry/gate',
      description: 'performance 0.93 ≥ 0.90',
      target_url: 'https://ci.example/run/1',
    });
    assert.equal(status.state, 'success');
    assert.equal(status.creator, 'gantry[bot]');
  });

  it('bad input is a UsageError (exit 2) before anything is sent: the state, a description over 140 characters, the target URL, the repository', async () => {
    const bad: unknown[] = [
      { repository: 'octo-org/site', sha, state: 'passed' },
      { repository: 'octo-org/site', sha, state: 'failure', description: 'x'.repeat(141) },
      { repository: 'octo-org/site', sha, state: 'failure', targetUrl: 'javascript:alert(1)' },
      { repository: 'octo-org', sha, state: 'success' },
      { repository: 'octo-org/site', sha: '', state: 'success' },
      { repository: 'octo-org/site', sha, state: 'success', context: '' },
    ];
    for (const input of bad) {
      await assert.rejects(
        createCommitStatus(client, input as never),
        (e: unknown) => e instanceof UsageError && e.exitCode === ExitCode.usage,
        JSON.stringify(input),
      );
    }
    await client.createCommitStatus({ repository: 'octo-org/site', sha, state: 'pending', description: 'é'.repeat(140) });
    assert.equal(peer.seen.length, 1, 'only the valid one was sent');
  });

  it('listCommitStatuses and paginate follow the Link header\'s rel="next" through every page', async () => {
    const statuses = await listCommitStatuses(client, { repository: 'octo-org/site', ref: 'main' });
    assert.deepEqual(
      statuses.map((s) => s.id),
      [10, 11, 20, 21, 30, 31],
    );
    assert.equal(peer.seen.length, 3);
    assert.equal(peer.seen[0]!.path, '/repos/octo-org/site/commits/main/statuses');
    const limited: unknown[] = [];
    for await (const item of client.paginate('/repos/o/r/issues', { limit: 3 })) limited.push(item);
    assert.equal(limited.length, 3);
  });

  it('a next link to another origin is refused: the token goes to the platform only', async () => {
    peer.setScript(() => ({ status: 200, body: [1], headers: { link: '<https://elsewhere.example/page2>; rel="next"' } }));
    const items: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const item of client.paginate('/repos/o/r/issues')) items.push(item);
      })(),
      /not on the platform API/,
    );
    assert.deepEqual(items, [1]);
  });
});
