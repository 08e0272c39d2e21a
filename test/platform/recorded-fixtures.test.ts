// PlatformClient and `gantry platform api` against interactions recorded on the real REST API (@octokit/fixtures,
// replayed by @octokit/fixtures-server in a process of its own on 127.0.0.1): real status codes, error bodies, Link
// pagination and rate-limit headers. Each test loads a fresh run of one scenario; the server answers a request only if
// it matches the next recorded one (method, path, query, body, request headers).
//
// What the recordings do not hold: a 401 (no scenario has one; the bad-credentials path is tested against the embedded
// platform API in against-devserver.test.ts), a rate-limit refusal, and `GET /rate_limit`. Not applicable:
// release-assets and release-assets-conflict (a text/plain upload to uploads.github.com; the client sends JSON bodies
// only), get-archive (a tarball), the rest of the catalogue (endpoints Gantry does not use; get-repository and
// get-organization stand for plain GETs). Request headers: see test/peers/octokit-fixtures.ts — Gantry's `Bearer` and
// `application/json` are written into the recordings' requests; `Accept` is the caller's, through `headers` / `-H`.
import assert from 'node:assert/strict';
import { ExitCode } from '../../lib/errors.js';
import { silentLogger } from '../../lib/log.js';
import { MemoryBudgetStore, PlatformApiError, PlatformClient, createCommitStatus } from '../../lib/platform/index.js';
import { runGantry as gantry } from '../cli/gantry-process.js';
import { recordedAccept, recordedToken, startOctokitFixtures, type OctokitFixtures } from '../peers/octokit-fixtures.js';

const scenarios = [
  'get-repository',
  'get-organization',
  'paginate-issues',
  'create-status',
  'errors',
  'branch-protection',
  'rename-repository',
  'search-issues',
  'labels',
];
const org = 'octokit-fixture-org';
const sha = '0000000000000000000000000000000000000001';

/** What the promise was rejected with; a fulfilled one fails the test. */
function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (answer) => assert.fail(`expected a refusal, got ${JSON.stringify(answer).slice(0, 200)}`),
    (error: unknown) => error,
  );
}

describe('platform client against recorded REST API answers (@octokit/fixtures)', function () {
  this.timeout(60_000);
  let fixtures: OctokitFixtures;
  const clients: PlatformClient[] = [];
  before(async () => {
    fixtures = await startOctokitFixtures(scenarios);
  });
  after(async () => {
    await fixtures?.stop();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  /** A client for one fresh run of the scenario, speaking as the recorder did: its token, its Accept. */
  async function clientFor(scenario: string): Promise<PlatformClient> {
    const client = new PlatformClient({
      baseUrl: await fixtures.load(scenario),
      token: recordedToken,
      headers: { accept: recordedAccept },
      env: {},
      store: new MemoryBudgetStore(),
      logger: silentLogger,
      proxy: {},
    });
    clients.push(client);
    return client;
  }

  it('get-repository: RATE-HDR-LIMIT, RATE-HDR-REMAINING, RATE-HDR-USED, RATE-HDR-RESET, RATE-HDR-RESOURCE — the recorded headers become the core budget the client keeps', async () => {
    const client = await clientFor('get-repository');
    const answer = await client.request<{ full_name: string; topics: string[] }>('GET', '/repos/{owner}/{repo}', {
      params: { owner: org, repo: 'hello-world' },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.full_name, `${org}/hello-world`);
    assert.equal(answer.headers.etag, '"00000000000000000000000000000000"');
    const { kept } = await client.budgets();
    // The recorder normalized x-ratelimit-reset to 1507651200000 (a millisecond-looking number); taken as it says.
    assert.deepEqual(
      { ...kept.resources.core, heldUntil: undefined },
      { limit: 5000, remaining: 4999, used: 1, reset: 1507651200000, inFlight: 0, heldUntil: undefined },
    );
    assert.equal(kept.points['GET /repos/{}/{}'], 1);
  });

  it('get-organization: `gantry platform api -H Accept:…` prints the recorded answer and exits 0 (RATE-EP-PREFER-HEADERS: no /rate_limit call on its own)', async () => {
    const url = await fixtures.load('get-organization');
    const result = await gantry(['platform', 'api', `/orgs/${org}`, '-H', `Accept: ${recordedAccept}`], {
      PLATFORM_API_URL: url,
      GANTRY_PLATFORM_TOKEN: recordedToken,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).login, org);
    assert.doesNotMatch(result.stderr, new RegExp(recordedToken));
  });

  it('get-organization: `gantry platform api -H Authorization:…` is refused before sending (exit 2), without echoing the value; the recorded request is still there to answer', async () => {
    const url = await fixtures.load('get-organization');
    const env = { PLATFORM_API_URL: url, GANTRY_PLATFORM_TOKEN: recordedToken };
    const refused = await gantry(['platform', 'api', `/orgs/${org}`, '-H', 'Authorization: token ghp_onthecommandline0000000000000000000'], env);
    assert.equal(refused.code, ExitCode.usage, refused.stderr);
    assert.match(refused.stderr, /-H: authorization is not taken on the command line/);
    assert.doesNotMatch(refused.stderr, /ghp_onthecommandline/);
    const answered = await gantry(['platform', 'api', `/orgs/${org}`, '-H', `Accept: ${recordedAccept}`], env);
    assert.equal(answered.code, 0, answered.stderr);
  });

  it('paginate-issues: paginate follows the recorded Link rel="next" from /repos/…/issues onto /repositories/1000/issues pages 2–5, every item once, in order', async () => {
    const client = await clientFor('paginate-issues');
    const numbers: number[] = [];
    for await (const issue of client.paginate<{ number: number }>('/repos/{owner}/{repo}/issues', {
      params: { owner: org, repo: 'paginate-issues' },
      query: { per_page: 3 },
    }))
      numbers.push(issue.number);
    assert.deepEqual(numbers, [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    // Each page was one request of the client, counted on its endpoint (RATE-COST-REST-READ).
    const { kept } = await client.budgets();
    assert.equal(
      Object.values(kept.points).reduce((a, b) => a + b, 0),
      5,
    );
  });

  it('paginate-issues: `gantry platform api --paginate` prints the five pages as one array', async () => {
    const url = await fixtures.load('paginate-issues');
    const result = await gantry(
      ['platform', 'api', `/repos/${org}/paginate-issues/issues`, '-X', 'GET', '-f', 'per_page=3', '--paginate', '-H', `accept: ${recordedAccept}`],
      {
        PLATFORM_API_URL: url,
        GANTRY_PLATFORM_TOKEN: recordedToken,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      (JSON.parse(result.stdout) as Array<{ number: number }>).map((issue) => issue.number),
      [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
    );
  });

  it('create-status: createCommitStatus posts the recorded statuses (RATE-SEC-CONTENT-CREATION counts both), the list and the combined status read them back', async () => {
    const client = await clientFor('create-status');
    const repository = `${org}/create-status`;
    // The recorded bodies: state, target_url, description and context.
    const input = (state: 'failure' | 'success', n: number) =>
      ({ repository, sha, state, targetUrl: 'https://example.com', description: `create-status ${state} test`, context: `example/${n}` }) as const;
    const failure = await createCommitStatus(client, input('failure', 1));
    assert.equal(failure.state, 'failure');
    assert.equal(failure.context, 'example/1');
    assert.equal(failure.creator, 'octokit-fixture-user-a');
    assert.match(failure.createdAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const success = await client.createCommitStatus(input('success', 2));
    assert.equal(success.state, 'success');
    const { kept } = await client.budgets();
    assert.equal(kept.creationsLastMinute, 2);
    assert.equal(kept.points['POST /repos/{}/{}/statuses/{}'], 10); // RATE-COST-REST-WRITE: 5 each
    // listCommitStatuses asks per_page=100 (fewer pages, fewer points); Octokit recorded the list without it, so the
    // same endpoint is read here through paginate, as listCommitStatuses does.
    const listed: Array<{ state: string; context: string }> = [];
    for await (const status of client.paginate<{ state: string; context: string }>('/repos/{owner}/{repo}/commits/{ref}/statuses', {
      params: { owner: org, repo: 'create-status', ref: sha },
    }))
      listed.push(status);
    assert.deepEqual(
      listed.map((s) => [s.state, s.context]),
      [
        ['success', 'example/2'],
        ['failure', 'example/1'],
      ],
    );
    const combined = await client.request<{ state: string; total_count: number }>('GET', '/repos/{owner}/{repo}/commits/{ref}/status', {
      params: { owner: org, repo: 'create-status', ref: sha },
    });
    assert.equal(combined.body.state, 'failure');
    assert.equal(combined.body.total_count, 2);
  });

  it("errors: a recorded 422 is a PlatformApiError (exit 1) with the platform's message, errors[], documentation_url and the answer's headers, never retried", async () => {
    const client = await clientFor('errors');
    const error = await refusal(
      client.request('POST', '/repos/{owner}/{repo}/labels', { params: { owner: org, repo: 'errors' }, body: { name: 'foo', color: 'invalid' } }),
    );
    assert.ok(error instanceof PlatformApiError, String(error));
    assert.equal(error.status, 422);
    assert.equal(error.exitCode, ExitCode.checkFailed);
    assert.equal(error.code, 'PLATFORM_422');
    assert.equal(error.platformMessage, 'Validation Failed');
    assert.deepEqual(error.errors, [{ resource: 'Label', code: 'invalid', field: 'color' }]);
    assert.match(error.message, /422: Validation Failed \(Label color invalid\)/);
    assert.match(error.documentationUrl ?? '', /\/docs\.github\.com\/[^/]+\/rest\/reference\/issues#create-a-label$/);
    assert.match(error.hint ?? '', /see http:\/\/127\.0\.0\.1:\d+\/docs\.github\.com\//);
    assert.equal(error.attempts, 1);
    // The refused answer's headers stay on the error, as they came: the budget left and the request id to quote.
    assert.match(String(error.headers['x-ratelimit-remaining']), /^\d+$/);
    assert.ok(error.headers['x-github-request-id'], JSON.stringify(error.headers));
  });

  it('errors: `gantry platform api` with -f fields posts them as the recorded JSON body; the 422 exits 1 naming the field', async () => {
    const url = await fixtures.load('errors');
    const result = await gantry(
      ['platform', 'api', `/repos/${org}/errors/labels`, '-f', 'name=foo', '-f', 'color=invalid', '-H', `Accept: ${recordedAccept}`],
      {
        PLATFORM_API_URL: url,
        GANTRY_PLATFORM_TOKEN: recordedToken,
      },
    );
    assert.equal(result.code, ExitCode.checkFailed, result.stderr);
    assert.match(result.stderr, /Validation Failed \(Label color invalid\)/);
    assert.equal(result.stdout, '');
  });

  it("branch-protection: a recorded 404 is a PlatformApiError (exit 1) with the platform's own message", async () => {
    const client = await clientFor('branch-protection');
    const error = await refusal(client.request('GET', `/repos/${org}/branch-protection/branches/main/protection`));
    assert.ok(error instanceof PlatformApiError, String(error));
    assert.equal(error.status, 404);
    assert.equal(error.exitCode, ExitCode.checkFailed);
    assert.equal(error.platformMessage, 'Branch not protected');
    assert.match(error.hint ?? '', /check the owner, repository and path/);
  });

  it('rename-repository: a GET answered 301 and a PATCH answered 307 are followed on the same origin, the PATCH with its body', async () => {
    const client = await clientFor('rename-repository');
    const path = `/repos/${org}/rename-repository`;
    const renamed = await client.request<{ name: string }>('PATCH', path, { body: { name: 'rename-repository-newname' } });
    assert.equal(renamed.body.name, 'rename-repository-newname');
    const moved = await client.request<{ name: string }>('GET', path);
    assert.equal(moved.status, 200);
    assert.equal(moved.body.name, 'rename-repository-newname');
    const patched = await client.request<{ description: string }>('PATCH', path, {
      body: { name: 'rename-repository-newname', description: 'test description' },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.description, 'test description');
  });

  it("search-issues: RATE-HDR-RESOURCE, RATE-PRI-STRICTER-ENDPOINTS — the recorded search budget (30) is kept apart from core; paginate reads search's items", async () => {
    const client = await clientFor('search-issues');
    const found: number[] = [];
    for await (const issue of client.paginate<{ number: number }>('/search/issues', { query: { q: `sesame repo:${org}/search-issues` } }))
      found.push(issue.number);
    assert.equal(found.length, 2);
    const { kept } = await client.budgets();
    assert.deepEqual([kept.resources.search?.limit, kept.resources.search?.remaining], [30, 29]);
    assert.equal(kept.resources.core?.remaining, undefined);
  });

  it('labels: list, create, read, update and a DELETE answered 204 without a body (RATE-COST-REST-READ, RATE-COST-REST-WRITE)', async () => {
    const client = await clientFor('labels');
    const repo = { owner: org, repo: 'labels' };
    const labels = [];
    for await (const label of client.paginate<{ name: string }>('/repos/{owner}/{repo}/labels', { params: repo })) labels.push(label.name);
    assert.ok(labels.includes('bug'), labels.join());
    const created = await client.request<{ name: string }>('POST', '/repos/{owner}/{repo}/labels', {
      params: repo,
      body: { name: 'test-label', color: '663399' },
    });
    assert.equal(created.status, 201);
    await client.request('GET', '/repos/{owner}/{repo}/labels/{name}', { params: { ...repo, name: 'test-label' } });
    const updated = await client.request<{ name: string; color: string }>('PATCH', '/repos/{owner}/{repo}/labels/{name}', {
      params: { ...repo, name: 'test-label' },
      body: { new_name: 'test-label-updated', color: 'BADA55' },
    });
    assert.deepEqual([updated.body.name, updated.body.color], ['test-label-updated', 'BADA55']);
    const deleted = await client.request('DELETE', '/repos/{owner}/{repo}/labels/{name}', { params: { ...repo, name: 'test-label-updated' } });
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, undefined);
  });
});
