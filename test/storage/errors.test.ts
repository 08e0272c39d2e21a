// The storage client's errors and retries against the embedded server's faults (/_gantry/faults): Drive's error body
// as a StorageError with its reason and exit code; 429, 5xx and 403 rate-limit reasons retried with backoff, other
// 403s never; creating POSTs retried only on answers that say they were not carried out; tokens never shown.
import assert from 'node:assert/strict';
import { ExitCode } from '../../lib/errors.js';
import { StorageError, type StorageTokenSource } from '../../lib/storage/index.js';
import { everythingSaid, fastRetry, rejection, setup, TOKEN, type Setup } from './helpers.js';

describe('storage client: errors and retries', function () {
  this.timeout(30_000);
  let s: Setup;
  before(async () => {
    s = await setup();
  });
  after(() => s.close());
  afterEach(() => s.admin('DELETE', 'faults'));

  /** Retries long enough for a 150 ms quota window to turn. */
  const patient = { ...fastRetry, retries: 8, backoff: { initialMs: 40, maxMs: 80, factor: 2, jitter: 0 } };

  /** The requests one call makes, counted by the server. */
  const counted = async (call: () => Promise<unknown>) => {
    const before = await s.requests();
    let error: unknown;
    let result: unknown;
    try {
      result = await call();
    } catch (e) {
      error = e;
    }
    return { requests: (await s.requests()) - before, error: error as StorageError | undefined, result };
  };

  it('STO-FILES-GET: 404 is a StorageError with reason notFound, the location, advice, exit 1 — and no retry', async () => {
    const { requests, error } = await counted(() => s.client.files.get({ fileId: 'no-such-file' }));
    assert.ok(error instanceof StorageError);
    assert.equal(error.status, 404);
    assert.equal(error.reason, 'notFound');
    assert.equal(error.location, 'fileId');
    assert.equal(error.exitCode, ExitCode.checkFailed);
    assert.equal(error.code, 'STORAGE_NOT_FOUND');
    assert.match(
      error.message,
      /^GET http:\/\/127\.0\.0\.1:\d+\/storage\/v2\/files\/no-such-file answered 404 notFound \(fileId\): File not found: no-such-file$/,
    );
    assert.match(String(error.hint), /check the id/);
    assert.equal(requests, 1);
  });

  it('STO-FILES-PATCH STO-FILES-UPDATE STO-FILES-DELETE STO-FILES-TRASH: If-Match with a stale etag is 412 conditionNotMet (exit 1), sent once; the current etag goes through', async () => {
    const file = await s.client.files.insert({ requestBody: { title: 'v1' } });
    const changed = await s.client.files.patch({ fileId: file.id!, requestBody: { title: 'v2' }, ifMatch: file.etag! });
    for (const call of [
      () => s.client.files.patch({ fileId: file.id!, requestBody: { title: 'lost update' }, ifMatch: file.etag! }),
      () => s.client.files.update({ fileId: file.id!, requestBody: { title: 'lost update' }, ifMatch: file.etag! }),
      () => s.client.files.trash({ fileId: file.id!, ifMatch: file.etag! }),
      () => s.client.files.delete({ fileId: file.id!, ifMatch: file.etag! }),
    ]) {
      const { requests, error } = await counted(call);
      assert.ok(error instanceof StorageError);
      assert.equal(error.status, 412);
      assert.equal(error.reason, 'conditionNotMet');
      assert.equal(error.location, 'If-Match');
      assert.equal(error.exitCode, 1);
      assert.match(String(error.hint), /read it again/);
      assert.equal(requests, 1);
    }
    assert.equal((await s.client.files.get({ fileId: file.id! })).title, 'v2');
    assert.equal(await s.client.files.delete({ fileId: file.id!, ifMatch: changed.etag! }), undefined);
  });

  it('STO-FILES-LIST: a plain 403 is never retried (one request), exit 1', async () => {
    await s.admin('POST', 'faults', { kind: 'status', status: 403, times: 5 });
    const { requests, error } = await counted(() => s.client.files.list());
    assert.ok(error instanceof StorageError);
    assert.equal(error.status, 403);
    assert.equal(error.attempts, 1);
    assert.equal(error.exitCode, 1);
    assert.equal(requests, 1);
    assert.equal((await s.admin('GET', 'faults')).faults[0].times, 4, 'the other four answers were never asked for');
  });

  it('STO-FILES-LIST STO-FILES-GET: 403 userRateLimitExceeded is retried with backoff until the quota window turns, then succeeds', async () => {
    await s.client.about.get();
    await s.admin('PUT', 'faults', { kind: 'quota', requests: 1, windowMs: 150 });
    await s.client.about.get(); // the window's one request
    const retrying = s.clientWith({ retry: patient });
    const { requests, error, result } = await counted(() => retrying.files.list({ maxResults: 1 }));
    assert.equal(error, undefined, error?.message);
    assert.equal((result as { kind: string }).kind, 'storage#fileList');
    assert.ok(requests >= 2, `retried (${requests} requests)`);
    assert.ok(
      s.logs.some((line) => /403/.test(line) && /userRateLimitExceeded/.test(line)),
      `the retry is logged with its reason: ${s.logs.slice(-3).join(' | ')}`,
    );
  });

  it('STO-FILES-LIST: 429 is retried, then succeeds; 403 userRateLimitExceeded that never lets up exits 3 after the retries, with advice', async () => {
    await s.admin('PUT', 'faults', { kind: 'status', status: 429, times: 2 });
    const retried = await counted(() => s.client.files.list({ maxResults: 1 }));
    assert.equal(retried.error, undefined);
    assert.equal(retried.requests, 3);
    await s.admin('PUT', 'faults', { kind: 'quota', requests: 0, windowMs: 60_000 });
    const spent = await counted(() => s.client.files.list());
    assert.ok(spent.error instanceof StorageError);
    assert.equal(spent.error.reason, 'userRateLimitExceeded');
    assert.equal(spent.error.attempts, 4);
    assert.equal(spent.requests, 4, 'the first try and 3 retries');
    assert.equal(spent.error.exitCode, ExitCode.remote);
    assert.match(spent.error.message, /after 4 attempts/);
    assert.match(String(spent.error.hint), /rate limit/);
    await s.admin('PUT', 'faults', { kind: 'quota', requests: 0, windowMs: 60_000, status: 429, reason: 'rateLimitExceeded' });
    const spent429 = await counted(() => s.client.about.get());
    assert.equal(spent429.error?.status, 429);
    assert.equal(spent429.error?.reason, 'rateLimitExceeded');
    assert.equal(spent429.error?.exitCode, 3);
    await s.admin('PUT', 'faults', { kind: 'status', status: 503, times: 10 });
    const failing = await counted(() => s.client.about.get());
    assert.equal(failing.error?.status, 503);
    assert.equal(failing.error?.reason, 'backendError');
    assert.equal(failing.error?.exitCode, 3);
    assert.equal(failing.requests, 4);
  });

  it('STO-FILES-INSERT STO-COMMENTS-INSERT: a creating POST is not sent again after a 5xx (it may have been carried out), but is after a 429 or a rate-limit 403; an idempotent one (files.trash) is', async () => {
    const title = `once-${Date.now()}`;
    await s.admin('PUT', 'faults', { kind: 'status', status: 503, times: 1, method: 'POST' });
    const failed = await counted(() => s.client.files.insert({ requestBody: { title } }));
    assert.equal(failed.error?.status, 503);
    assert.equal(failed.requests, 1);
    await s.admin('PUT', 'faults', { kind: 'status', status: 429, times: 1, method: 'POST' });
    const made = await counted(() => s.client.files.insert({ requestBody: { title } }));
    assert.equal(made.error, undefined);
    assert.equal(made.requests, 2);
    assert.equal((await s.client.files.list({ q: `title = '${title}'` })).items?.length, 1, 'one file');
    await s.admin('PUT', 'faults', { kind: 'quota', requests: 1, windowMs: 150 });
    await s.client.about.get();
    const limited = await counted(() => s.clientWith({ retry: patient }).files.insert({ requestBody: { title: `${title}-2` } }));
    assert.equal(limited.error, undefined);
    assert.ok(limited.requests >= 2, 'sent again after 403 userRateLimitExceeded');
    await s.admin('DELETE', 'faults');
    assert.equal((await s.client.files.list({ q: `title = '${title}-2'` })).items?.length, 1, 'one file');
    const file = made.result as { id: string };
    await s.admin('PUT', 'faults', { kind: 'status', status: 503, times: 1, method: 'POST' });
    const comment = await counted(() => s.client.comments.insert({ fileId: file.id, requestBody: { content: 'once' } }));
    assert.equal(comment.requests, 1);
    await s.admin('PUT', 'faults', { kind: 'status', status: 503, times: 1, method: 'POST' });
    const trashed = await counted(() => s.client.files.trash({ fileId: file.id }));
    assert.equal(trashed.error, undefined);
    assert.equal(trashed.requests, 2, 'trash is safe to send again');
    await s.admin('PUT', 'faults', { kind: 'status', status: 503, times: 1, method: 'POST' });
    const conditional = await counted(() => s.client.files.untrash({ fileId: file.id, ifMatch: '*' }));
    assert.equal(conditional.requests, 1, 'a conditional write is not sent again after a 5xx');
  });

  it('STO-ABOUT-GET: a wrong token is 401 authError (exit 1, advice to log in again) and the token is in no message, hint, stack or log line', async () => {
    const wrong = 'ya29.a-wrong-token-that-must-never-show-0123456789';
    const client = s.clientWith({ token: wrong });
    const error = await rejection(client.about.get({ fields: 'kind' }));
    assert.ok(error instanceof StorageError);
    assert.equal(error.status, 401);
    assert.equal(error.reason, 'authError');
    assert.equal(error.exitCode, 1);
    assert.match(String(error.hint), /gantry auth/);
    const notFound = await rejection(s.client.files.get({ fileId: 'missing' }));
    for (const said of [everythingSaid(error), everythingSaid(notFound), s.logs.join('\n')]) {
      assert.ok(!said.includes(wrong), 'the wrong token is not shown');
      assert.ok(!said.includes(TOKEN), 'the right token is not shown');
    }
  });

  it('STO-ABOUT-GET: a token source (an AuthSession) is asked per request; after a 401 it is refreshed once and the request sent again', async () => {
    let current = 'ya29.expired-token-of-a-session';
    let refreshed = 0;
    const session: StorageTokenSource = {
      getAccessToken: async () => current,
      refresh: async () => {
        refreshed++;
        current = TOKEN;
      },
    };
    const client = s.clientWith({ token: session });
    assert.equal((await client.about.get()).kind, 'storage#about');
    assert.equal(refreshed, 1);
    assert.equal((await client.about.get()).kind, 'storage#about');
    assert.equal(refreshed, 1, 'no refresh while the token works');
    const never: StorageTokenSource = { getAccessToken: async () => 'ya29.revoked-for-good', refresh: async () => void refreshed++ };
    const error = await rejection(s.clientWith({ token: never }).about.get());
    assert.equal(error.status, 401);
    assert.equal(refreshed, 2, 'one refresh, then the 401 stands');
  });

  it('STO-ABOUT-GET: a 403 insufficientPermissions about authentication scopes (a login without a storage scope) advises logging in with one; about a file, asking its owner', () => {
    const body = (message: string) => ({ error: { code: 403, message, errors: [{ domain: 'global', reason: 'insufficientPermissions', message }] } });
    const scopes = new StorageError({
      status: 403,
      method: 'GET',
      url: 'https://storage.example/storage/v2/about',
      body: body('Request had insufficient authentication scopes.'),
    });
    assert.match(scopes.hint!, /--scope storage\.file/);
    const file = new StorageError({
      status: 403,
      method: 'GET',
      url: 'https://storage.example/storage/v2/files/x',
      body: body('The user does not have sufficient permissions for this file.'),
    });
    assert.match(file.hint!, /ask its owner/);
    assert.equal(scopes.exitCode, ExitCode.checkFailed);
  });

  it('STO-BASE-PREFIX: the base URL must be https, or http on loopback; no token is a UsageError before anything is sent', async () => {
    const { createStorageClient } = await import('../../lib/storage/index.js');
    for (const baseUrl of ['http://storage.example.com', 'ftp://127.0.0.1', 'not a url', 'https://user:pw@storage.example.com']) {
      const error = (() => {
        try {
          createStorageClient({ baseUrl, token: TOKEN });
        } catch (e) {
          return e as Error & { exitCode: number };
        }
        return undefined;
      })();
      assert.equal(error?.exitCode, 2, baseUrl);
      assert.ok(!error.message.includes('pw@'), 'no password shown');
    }
    const saved = process.env.STORAGE_TOKEN;
    delete process.env.STORAGE_TOKEN;
    try {
      assert.throws(
        () => createStorageClient({ baseUrl: s.h.server.url }),
        /createStorageClient: options\.token must be a bearer token or an object with getAccessToken\(\)/,
      );
    } finally {
      if (saved !== undefined) process.env.STORAGE_TOKEN = saved;
    }
    const fromEnv = { url: process.env.STORAGE_BASE_URL, token: process.env.STORAGE_TOKEN };
    process.env.STORAGE_BASE_URL = s.h.server.url;
    process.env.STORAGE_TOKEN = TOKEN;
    try {
      const client = createStorageClient();
      assert.equal((await client.about.get()).kind, 'storage#about');
      client.close();
    } finally {
      for (const [name, value] of [
        ['STORAGE_BASE_URL', fromEnv.url],
        ['STORAGE_TOKEN', fromEnv.token],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
