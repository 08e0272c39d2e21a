/* eslint-disable @typescript-eslint/no-explicit-any -- tests edit recorded JSON documents freely */
// One redaction path for every URL that reaches a message: a page URL that carries a credential travels inside the
// API request's own URL (`…/runPageanalysis?url=https%3A%2F%2F…%3Ftoken%3D…`), percent-encoded, and must be masked
// there as it is when it reaches a message alone. The API engine against the embedded v5 API on 127.0.0.1, through
// every path a URL takes into output: the API's refusals, retries in the log, a body that is not v5, a run that
// failed, an unreachable service, the summary, and the fields of the errors the library throws.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { createPageanalysisClient, pageanalysisRetryPolicy } from '../../lib/analysis/index.js';
import { definePolicy } from '../../lib/http/index.js';
import { redact, redactUrl } from '../../lib/redact.js';
import { recordedAnalyser, startPageanalysisServer, type PageanalysisServer } from '../../devserver/pageanalysis/index.js';
import { recordedLighthouseResult } from './fixture.js';
import { gantry } from './gantry.js';
import { startHttpPeer } from '../peers/http.js';

const KEY = 'redaction-key-83c1f0a9';
const TOKEN = 'supersecret123';
const PASSWORD = 'hunter2pass99';
const fastRetry = definePolicy({ backoff: { initialMs: 5, maxMs: 20, factor: 2, jitter: 0 } }, pageanalysisRetryPolicy);

/** Every string reachable from an error: its own fields, its causes, its inspection and its JSON. */
function everythingIn(error: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  const walk = (value: unknown, depth: number) => {
    if (depth > 6 || value === null || value === undefined || seen.has(value)) return;
    if (typeof value === 'string') return void parts.push(value);
    if (typeof value !== 'object') return void parts.push(String(value));
    seen.add(value);
    if (value instanceof Error) parts.push(value.message, value.stack ?? '');
    for (const key of Reflect.ownKeys(value)) walk((value as any)[key], depth + 1);
  };
  walk(error, 0);
  parts.push(inspect(error, { depth: 8 }));
  try {
    parts.push(JSON.stringify(error));
  } catch {
    // a cycle: the walk above has read it all
  }
  return parts.join('\n');
}

function assertNoCredential(text: string, where: string): void {
  assert.doesNotMatch(text, new RegExp(`${TOKEN}|${PASSWORD}|${KEY}`), `${where} shows a credential:\n${text}`);
}

describe('one redaction path for every URL that reaches a message (api engine against the embedded v5 API)', function () {
  this.timeout(240_000);
  let api: PageanalysisServer;
  let broken: PageanalysisServer;
  const page = () => `http://deploy:${PASSWORD}@127.0.0.1:8080/shop?token=${TOKEN}&view=full`;
  const env = (server = api) => ({ PAGEANALYSIS_BASE_URL: server.url, PAGEANALYSIS_API_KEY: KEY });

  before(async () => {
    api = await startPageanalysisServer({ apiKeys: [KEY], analyser: recordedAnalyser(() => recordedLighthouseResult()) });
    // Answers 200 with a document that is not v5, quoting the page URL in the bad field.
    broken = await startPageanalysisServer({
      apiKeys: [KEY],
      analyser: async (ask) => ({ ...recordedLighthouseResult(), categories: { performance: { id: 'performance', score: `high for ${ask.url}` } } }),
    });
  });
  after(async () => {
    await api?.stop();
    await broken?.stop();
  });

  it("redactUrl masks a URL nested, percent-encoded, in another URL's query, at any depth; redact does the same in free text", () => {
    const inner = page();
    const outer = `http://127.0.0.1:5760/pageanalysis/v5/runPageanalysis?url=${encodeURIComponent(inner)}&key=abcd1234&strategy=DESKTOP`;
    const twice = `https://ci.example/?next=${encodeURIComponent(outer)}`;
    for (const url of [outer, twice]) {
      for (const shown of [redactUrl(url), redact(url), redact(`GET ${url} answered 400: bad`)]) {
        assertNoCredential(shown, 'the masked URL');
        assert.doesNotMatch(shown, /abcd1234/);
        assert.match(shown, /view%(25)?3Dfull/, 'other parameters stay readable');
        assert.equal(redact(shown), shown, 'redacting twice changes nothing');
      }
    }
    assert.equal(
      redactUrl(outer),
      'http://127.0.0.1:5760/pageanalysis/v5/runPageanalysis?url=http%3A%2F%2F%5BREDACTED%5D%40127.0.0.1%3A8080%2Fshop%3Ftoken%3D[REDACTED]%26view%3Dfull&key=[REDACTED]&strategy=DESKTOP'.replace(
        '%5BREDACTED%5D',
        '[REDACTED]',
      ),
    );
  });

  it('the API refuses (400): the error on stderr masks the page token inside the request URL, exit 1', async () => {
    api.injectFault({ status: 400, message: 'Invalid request (injected fault).' });
    const run = await gantry(['gate', page(), '--runs', '1'], env());
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /runPageanalysis\?url=\S*%3Ftoken%3D\[REDACTED\]/);
    assertNoCredential(run.stdout + run.stderr, 'gantry gate (400)');
  });

  it('a retried 500, logged with --verbose, and then a pass: no log line, table or --json field shows the token', async () => {
    api.injectFault({ status: 500, times: 1 });
    const run = await gantry(['--verbose', '--json', 'gate', page(), '--runs', '1'], env());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /retrying in/);
    assertNoCredential(run.stdout + run.stderr, 'gantry --verbose --json gate');
    const summary = JSON.parse(run.stdout);
    assert.match(summary.urls[0].url, /token=\[REDACTED\]/);
    const table = await gantry(['gate', page(), '--runs', '1'], env());
    assert.equal(table.code, 0, table.stderr);
    assertNoCredential(table.stdout + table.stderr, 'gantry gate (table)');
  });

  it('a 200 that is not a v5 document, quoting the page URL: the error names the page masked', async () => {
    const run = await gantry(['gate', page(), '--runs', '1', '--verbose'], env(broken));
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /is not a valid page analysis v5 response/);
    assertNoCredential(run.stdout + run.stderr, 'gantry gate (bad body)');
  });

  it('an unreachable service: the network error masks the page token inside the request URL', async () => {
    const gone = await startHttpPeer(() => {});
    await gone.close();
    const run = await gantry(['gate', page(), '--runs', '1'], { PAGEANALYSIS_BASE_URL: gone.url, PAGEANALYSIS_API_KEY: KEY });
    assert.equal(run.code, 3, run.stderr);
    assertNoCredential(run.stdout + run.stderr, 'gantry gate (unreachable)');
  });

  it('the errors the library throws carry no credential in any field: message, hint, url, body, cause, stack', async () => {
    const client = createPageanalysisClient({ baseUrl: api.url, apiKey: KEY, retry: fastRetry });
    const badBody = createPageanalysisClient({ baseUrl: broken.url, apiKey: KEY, retry: fastRetry });
    try {
      api.injectFault({ status: 400 });
      api.injectFault({ status: 503, times: 5 });
      for (const attempt of [() => client.run({ url: page() }), () => client.run({ url: page() }), () => badBody.run({ url: page() })]) {
        const error = await attempt().then(
          () => assert.fail('expected an error'),
          (e: unknown) => e,
        );
        assertNoCredential(everythingIn(error), `${(error as Error).name} ${(error as Error).message}`);
      }
    } finally {
      client.close();
      badBody.close();
    }
  });
});
