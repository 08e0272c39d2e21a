// @octokit/rest 22 (the stock REST client from npm) against the embedded platform API: the calls clients make first
// (GET /user, /orgs/{org}, a branch, a commit, the older statuses path), its paginator over Link headers, times to the
// second as the REST API writes them, and ETags — a conditional request answered 304 costs nothing of the primary
// budget, as the platform documents.
import assert from 'node:assert/strict';
import { Octokit } from '@octokit/rest';
import { startPlatformServer, type PlatformServer } from '../../devserver/platform/index.js';
import { call } from './platform/helpers.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const SECOND_PRECISION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const TOKEN = 'ghp_stock_octokit';

describe('DEV-STOCK-CLIENT: @octokit/rest against gantry dev platform', function () {
  this.timeout(30_000);
  let server: PlatformServer;
  let octokit: Octokit;
  beforeEach(async () => {
    server = await startPlatformServer({
      tokens: [
        { token: TOKEN, kind: 'personal', login: 'octo' },
        { token: 'ghs_workflow', kind: 'workflow', repository: 'gantry/demo' },
      ],
      repositories: [
        { owner: 'gantry', name: 'demo', branches: { 'feature/x': 'a'.repeat(40) } },
        { owner: 'gantry', name: 'private-infra', private: true },
      ],
    });
    octokit = new Octokit({ auth: TOKEN, baseUrl: server.url, log: quiet });
  });
  afterEach(() => server.stop());

  it("DEV-STOCK-CLIENT: GET /user answers the token's user (401 without a token, 403 for an integration's); GET /orgs/{org} the organization (404 unknown)", async () => {
    const me = await octokit.rest.users.getAuthenticated();
    assert.deepEqual([me.data.login, me.data.type], ['octo', 'User']);
    assert.match(me.data.created_at, SECOND_PRECISION);
    const anonymous = new Octokit({ baseUrl: server.url, log: quiet });
    await assert.rejects(
      anonymous.rest.users.getAuthenticated(),
      (error: { status: number; message: string }) => error.status === 401 && /Requires authentication/.test(error.message),
    );
    const workflow = new Octokit({ auth: 'ghs_workflow', baseUrl: server.url, log: quiet });
    await assert.rejects(workflow.rest.users.getAuthenticated(), (error: { status: number }) => error.status === 403);
    const org = await octokit.rest.orgs.get({ org: 'gantry' });
    assert.deepEqual([org.data.login, org.data.type, org.data.public_repos], ['gantry', 'Organization', 1]);
    await assert.rejects(octokit.rest.orgs.get({ org: 'nobody' }), (error: { status: number }) => error.status === 404);
  });

  it('DEV-STOCK-CLIENT: a branch (a slash in its name too), a commit by branch or sha, and statuses by the older /statuses/{ref} path and by commits/{ref}/statuses alike', async () => {
    const main = await octokit.rest.repos.getBranch({ owner: 'gantry', repo: 'demo', branch: 'main' });
    assert.equal(main.data.name, 'main');
    assert.match(main.data.commit.sha, /^[0-9a-f]{40}$/);
    const feature = await octokit.rest.repos.getBranch({ owner: 'gantry', repo: 'demo', branch: 'feature/x' });
    assert.equal(feature.data.commit.sha, 'a'.repeat(40));
    await assert.rejects(
      octokit.rest.repos.getBranch({ owner: 'gantry', repo: 'demo', branch: 'gone' }),
      (error: { status: number; message: string }) => error.status === 404 && /Branch not found/.test(error.message),
    );
    const commit = await octokit.rest.repos.getCommit({ owner: 'gantry', repo: 'demo', ref: 'main' });
    assert.equal(commit.data.sha, main.data.commit.sha);
    assert.match(commit.data.commit.committer!.date!, SECOND_PRECISION);
    assert.equal((await octokit.rest.repos.getCommit({ owner: 'gantry', repo: 'demo', ref: 'a'.repeat(40) })).data.sha, 'a'.repeat(40));
    await assert.rejects(
      octokit.rest.repos.getCommit({ owner: 'gantry', repo: 'demo', ref: 'no-such-ref' }),
      (error: { status: number }) => error.status === 422,
    );

    for (const context of ['ci/build', 'ci/test']) {
      const created = await octokit.rest.repos.createCommitStatus({ owner: 'gantry', repo: 'demo', sha: 'main', state: 'success', context });
      assert.match(created.data.created_at, SECOND_PRECISION);
    }
    const current = await octokit.rest.repos.listCommitStatusesForRef({ owner: 'gantry', repo: 'demo', ref: 'main' });
    const older = await octokit.request('GET /repos/{owner}/{repo}/statuses/{ref}', { owner: 'gantry', repo: 'demo', ref: 'main' });
    assert.deepEqual(older.data, current.data);
    assert.deepEqual(
      current.data.map((s) => s.context),
      ['ci/test', 'ci/build'],
    );
    const combined = await octokit.rest.repos.getCombinedStatusForRef({ owner: 'gantry', repo: 'demo', ref: 'main' });
    assert.equal(combined.data.state, 'success');
  });

  it('DEV-STOCK-CLIENT: octokit.paginate follows the Link headers through every page; every time it returns is to the second', async () => {
    for (let i = 1; i <= 12; i++) await octokit.rest.issues.create({ owner: 'gantry', repo: 'demo', title: `issue ${i}` });
    const all = await octokit.paginate(octokit.rest.issues.listForRepo, { owner: 'gantry', repo: 'demo', per_page: 5 });
    assert.deepEqual(
      all.map((i) => i.number),
      [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1],
    );
    let pages = 0;
    for await (const page of octokit.paginate.iterator(octokit.rest.issues.listForRepo, { owner: 'gantry', repo: 'demo', per_page: 5 })) {
      pages++;
      for (const issue of page.data) assert.match(issue.created_at, SECOND_PRECISION);
    }
    assert.equal(pages, 3);
    const comment = await octokit.rest.issues.createComment({ owner: 'gantry', repo: 'demo', issue_number: 1, body: 'hello' });
    assert.match(comment.data.created_at, SECOND_PRECISION);
    const deployment = await octokit.rest.repos.createDeployment({ owner: 'gantry', repo: 'demo', ref: 'main', required_contexts: [] });
    assert.ok('id' in deployment.data);
    assert.match(deployment.data.created_at, SECOND_PRECISION);
    const status = await octokit.rest.repos.createDeploymentStatus({ owner: 'gantry', repo: 'demo', deployment_id: deployment.data.id, state: 'success' });
    assert.match(status.data.created_at, SECOND_PRECISION);
    assert.match((await octokit.rest.repos.get({ owner: 'gantry', repo: 'demo' })).data.created_at!, SECOND_PRECISION);
  });

  it('DEV-STOCK-CLIENT: every GET carries an ETag; If-None-Match with it is 304 and leaves x-ratelimit-remaining unchanged; a changed resource answers 200 with a new ETag and counts', async () => {
    const first = await octokit.rest.repos.listCommitStatusesForRef({ owner: 'gantry', repo: 'demo', ref: 'main' });
    const etag = first.headers.etag!;
    assert.match(etag, /^W\/"[0-9a-f]{64}"$/);
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        octokit.rest.repos.listCommitStatusesForRef({ owner: 'gantry', repo: 'demo', ref: 'main', headers: { 'if-none-match': etag } }),
        (error: { status: number; response: { headers: Record<string, string>; data: unknown } }) => {
          assert.equal(error.status, 304);
          assert.equal(Number(error.response.headers['x-ratelimit-remaining']), remaining, 'a 304 costs nothing');
          assert.equal(error.response.headers.etag, etag);
          return true;
        },
      );
    }
    const limits = await octokit.rest.rateLimit.get();
    assert.equal(limits.data.resources.core.remaining, remaining, 'GET /rate_limit agrees');
    // A conditional request whose ETag no longer matches is an ordinary, counted 200.
    await octokit.rest.repos.createCommitStatus({ owner: 'gantry', repo: 'demo', sha: 'main', state: 'pending', context: 'ci/x' });
    const changed = await octokit.rest.repos.listCommitStatusesForRef({ owner: 'gantry', repo: 'demo', ref: 'main', headers: { 'if-none-match': etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.etag, etag);
    assert.equal(Number(changed.headers['x-ratelimit-remaining']), remaining - 2, 'the status and this read counted');
    // The weak comparison: a strong form of the tag, or one tag of a list, matches too; a mismatch does not.
    const plain = await call(server.url, 'GET', '/repos/gantry/demo', { token: TOKEN });
    const strong = plain.headers.etag!.replace(/^W\//, '');
    const fetched = await fetch(`${server.url}/repos/gantry/demo`, { headers: { authorization: `Bearer ${TOKEN}`, 'if-none-match': `"other", ${strong}` } });
    assert.equal(fetched.status, 304);
    assert.equal(await fetched.text(), '');
    assert.equal((await fetch(`${server.url}/repos/gantry/demo`, { headers: { authorization: `Bearer ${TOKEN}`, 'if-none-match': '"other"' } })).status, 200);
  });

  it('DEV-STOCK-CLIENT RATE-ERR-PRIMARY: with the primary budget spent a conditional request is still refused (403), not 304', async () => {
    const tight = await startPlatformServer({ limits: { user: 2 }, tokens: [{ token: TOKEN, kind: 'personal', login: 'octo' }] });
    try {
      const client = new Octokit({ auth: TOKEN, baseUrl: tight.url, log: quiet });
      const first = await client.rest.repos.get({ owner: 'gantry', repo: 'demo' });
      await client.rest.repos.get({ owner: 'gantry', repo: 'demo' });
      await assert.rejects(
        client.rest.repos.get({ owner: 'gantry', repo: 'demo', headers: { 'if-none-match': first.headers.etag! } }),
        (error: { status: number }) => error.status === 403,
      );
    } finally {
      await tight.stop();
    }
  });
});
