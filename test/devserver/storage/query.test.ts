// The search language `q` of the embedded storage server over real sockets (STO-FILES-LIST, STO-CHILDREN-LIST; no rule
// or AMB names q — the spec leaves query parameters "not shown"): or, not, parentheses and their precedence, the
// escapes, date comparisons, fullText, every malformed form as 400 in Drive's shape, and the length and depth bounds.
import assert from 'node:assert/strict';
import { StorageFailure } from '../../../devserver/storage/http.js';
import { MAX_QUERY_DEPTH, MAX_QUERY_LENGTH, parseQuery } from '../../../devserver/storage/query.js';
import { harness, reasonOf, type Harness, type Json } from './helpers.js';

const FOLDER = 'application/vnd.google-apps.folder';

describe('devserver/storage: the q search language', function () {
  this.timeout(20_000);
  let h: Harness;
  let folder: string;
  let before0: string;
  const list = (q: string, path = '/storage/v2/files') => h.api('GET', `${path}?q=${encodeURIComponent(q)}&maxResults=1000`);
  /** The titles a query selects among this suite's files (scoped to its folder by an outer `and`). */
  const titles = async (q: string): Promise<string[]> => {
    const res = await list(`'${folder}' in parents and (${q})`);
    assert.equal(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
    return res.body.items.map((i: { title: string }) => i.title);
  };
  const refused = (body: Json, why: RegExp, q: string) => {
    assert.equal(reasonOf(body), 'invalid', q);
    assert.deepEqual([body.error.errors[0].location, body.error.errors[0].locationType], ['q', 'parameter'], q);
    assert.match(body.error.message, /^Invalid query: /, q);
    assert.match(body.error.message, why, q);
  };

  before(async () => {
    h = await harness();
    before0 = new Date(Date.now() - 1000).toISOString();
    folder = (await h.api('POST', '/storage/v2/files', { title: 'q-folder', mimeType: FOLDER })).body.id;
    const make = async (title: string, mimeType: string, modifiedDate: string | undefined, extra: Record<string, unknown> = {}) => {
      const file = (await h.api('POST', '/storage/v2/files', { title, mimeType, parents: [{ id: folder }], ...extra })).body;
      if (modifiedDate) assert.equal((await h.api('PATCH', `/storage/v2/files/${file.id}?setModifiedDate=true`, { modifiedDate })).status, 200);
    };
    await make('alpha.txt', 'text/plain', '2020-01-01T00:00:00.000Z', { labels: { starred: true }, description: 'Quarterly numbers' });
    await make('beta.png', 'image/png', '2022-06-15T12:00:00.000Z');
    await make("gamma's.txt", 'text/plain', '2024-03-01T00:00:00.000Z');
    await make('back\\slash.json', 'application/json', '2023-01-01T00:00:00.000Z');
    await make('delta', FOLDER, undefined);
  });
  after(() => h.close());

  it('STO-FILES-LIST: or, not and parentheses select the files they say', async () => {
    assert.deepEqual(await titles("title = 'alpha.txt' or title = 'beta.png'"), ['alpha.txt', 'beta.png']);
    assert.deepEqual(await titles("not mimeType = 'text/plain'"), ['beta.png', 'back\\slash.json', 'delta']);
    assert.deepEqual(await titles("not (title contains 'ta' or starred = true)"), ["gamma's.txt", 'back\\slash.json']);
    assert.deepEqual(await titles('not not starred = true'), ['alpha.txt']);
    assert.deepEqual(await titles("((title = 'delta'))"), ['delta']);
    assert.deepEqual(await titles("title = 'beta.png' OR Title = 'delta' AND NOT starred = TRUE"), ['beta.png', 'delta'], 'keywords and fields in any case');
    assert.deepEqual(await titles("'root' in parents"), [], "'root' is the root folder's alias; none of these is in it");
    const whole = await list(`'${folder}' in parents and trashed = false and hidden != true`);
    assert.equal(whole.body.items.length, 5);
  });

  it('STO-FILES-LIST: precedence is not, then and, then or; parentheses override it', async () => {
    // a or b and c is a or (b and c): gamma is not starred, so only beta; ((a or b) and c) would select nothing.
    assert.deepEqual(await titles("title = 'beta.png' or title = 'gamma\\'s.txt' and starred = true"), ['beta.png']);
    // a and b or c is (a and b) or c: alpha comes through c; (a and (b or c)) would keep only beta.
    assert.deepEqual(await titles("starred = false and title = 'beta.png' or title = 'alpha.txt'"), ['alpha.txt', 'beta.png']);
    // not a and b is (not a) and b: only gamma; not (a and b) would select all but alpha.
    assert.deepEqual(await titles("not starred = true and mimeType = 'text/plain'"), ["gamma's.txt"]);
    assert.deepEqual(await titles("not (starred = true and mimeType = 'text/plain')"), ['beta.png', "gamma's.txt", 'back\\slash.json', 'delta']);
    assert.deepEqual(await titles("(title = 'beta.png' or title = 'alpha.txt') and starred = true"), ['alpha.txt']);
    assert.deepEqual(await titles("title = 'beta.png' or title = 'alpha.txt' and starred = true"), ['alpha.txt', 'beta.png']);
  });

  it("STO-FILES-LIST: strings take \\' and \\\\ escapes; title contains ignores case, mimeType contains does not; fullText looks in the title and description", async () => {
    assert.deepEqual(await titles("title = 'gamma\\'s.txt'"), ["gamma's.txt"]);
    assert.deepEqual(await titles("title = 'back\\\\slash.json'"), ['back\\slash.json']);
    assert.deepEqual(await titles("title != 'alpha.txt' and title contains 'ALPHA'"), []);
    assert.deepEqual(await titles("title contains 'ALPHA'"), ['alpha.txt']);
    assert.deepEqual(await titles("mimeType contains 'IMAGE'"), []);
    assert.deepEqual(await titles("mimeType contains 'image'"), ['beta.png']);
    assert.deepEqual(await titles("fullText contains 'quarterly'"), ['alpha.txt']);
    assert.deepEqual(await titles("fullText contains 'PNG'"), ['beta.png']);
  });

  it('STO-FILES-LIST: modifiedDate and createdDate compare with RFC 3339 dates (UTC unless an offset says otherwise)', async () => {
    assert.deepEqual(await titles("modifiedDate < '2021-01-01'"), ['alpha.txt']);
    assert.deepEqual(await titles("modifiedDate = '2022-06-15T14:00:00+02:00'"), ['beta.png']);
    assert.deepEqual(await titles("modifiedDate = '2022-06-15T12:00:00.000Z'"), ['beta.png']);
    assert.deepEqual(await titles("modifiedDate > '2022-06-15T12:00:00'"), ["gamma's.txt", 'back\\slash.json', 'delta']);
    assert.deepEqual(await titles("modifiedDate >= '2022-06-15T12:00:00Z' and modifiedDate <= '2024-03-01T00:00:00Z' and mimeType != 'image/png'"), [
      "gamma's.txt",
      'back\\slash.json',
    ]);
    assert.deepEqual(await titles("modifiedDate != '2023-01-01' and modifiedDate < '2024-01-01'"), ['alpha.txt', 'beta.png']);
    assert.deepEqual(await titles(`createdDate > '${before0}'`), ['alpha.txt', 'beta.png', "gamma's.txt", 'back\\slash.json', 'delta']);
    assert.deepEqual(await titles("createdDate < '2000-01-01T00:00:00-05:00'"), []);
  });

  it('STO-FILES-LIST STO-CHILDREN-LIST: every malformed query is 400 invalid at location q, saying what is wrong; children.list reads the same language', async () => {
    const malformed: Array<[string, RegExp]> = [
      ['   ', /no search term/],
      ['()', /empty parentheses/],
      ["(title = 'a'", /unbalanced '\('/],
      ["((title = 'a') or starred = true", /unbalanced '\('/],
      ["title = 'a')", /unbalanced '\)'/],
      ["title = 'a' and", /search term expected, not the end/],
      ["and title = 'a'", /'and' without a term/],
      ["title = 'a' or or starred = true", /'or' without a term/],
      ['not', /search term expected/],
      ["title = 'a' title = 'b'", /where 'and', 'or' or the end was expected/],
      ["owner = 'x'", /unknown field 'owner'/],
      ["'x' in owners", /unknown collection 'owners'/],
      ["'x' parents", /'in' expected/],
      ["title = 'abc", /unterminated string/],
      ["title = 'it\\'", /unterminated string/],
      ['title = "a"', /unexpected/],
      ["title < 'a'", /no operator of title/],
      ['title = a', /needs a quoted string/],
      ["starred = 'true'", /true or false/],
      ['trashed contains true', /no operator of trashed/],
      ["modifiedDate > '2024-02-30'", /RFC 3339/],
      ["modifiedDate > 'yesterday'", /RFC 3339/],
      ["modifiedDate > '2024-01-01T25:00:00Z'", /RFC 3339/],
      ["modifiedDate contains '2024'", /no operator of modifiedDate/],
      ["fullText = 'x'", /no operator of fullText/],
      ["title = 'a\\n'", /unknown escape/],
      ["title ! 'a'", /'!' without '='/],
    ];
    for (const [q, why] of malformed) {
      const res = await list(q);
      assert.equal(res.status, 400, q);
      refused(res.body, why, q);
    }
    const children = await list("title = 'delta' or title = 'beta.png'", `/storage/v2/files/${folder}/children`);
    assert.equal(children.status, 200);
    assert.equal(children.body.items.length, 2);
    const badChildren = await list("title = 'a' or", `/storage/v2/files/${folder}/children`);
    assert.equal(badChildren.status, 400);
    refused(badChildren.body, /search term expected/, 'children.list');
    assert.equal((await h.api('GET', '/storage/v2/files?q=')).status, 200, 'an empty q is no filter');
  });

  it(`STO-FILES-LIST: nesting is bounded (${MAX_QUERY_DEPTH} levels) and so is the length (${MAX_QUERY_LENGTH} characters): hostile queries are 400, never a stack overflow`, async () => {
    const nested = (n: number) => `${'('.repeat(n)}starred = true${')'.repeat(n)}`;
    assert.deepEqual(await titles(nested(MAX_QUERY_DEPTH - 1)), ['alpha.txt'], 'the outer parentheses of titles() make it the limit');
    const deeper = await list(`'${folder}' in parents and (${nested(MAX_QUERY_DEPTH)})`);
    assert.equal(deeper.status, 400);
    refused(deeper.body, /nested deeper than 64 levels/, 'one too deep');
    // 4 000 open parentheses fit in the length cap and in a GET; a parser without the bound overflows its stack on them.
    for (const q of [`${'('.repeat(4000)}starred = true`, `${'not '.repeat(2000)}starred = true`, nested(3000)]) {
      const res = await list(q);
      assert.equal(res.status, 400, q.slice(0, 20));
      refused(res.body, /nested deeper than 64 levels/, q.slice(0, 20));
    }
    const tenThousand = await list(`${'('.repeat(10_000)}starred = true`);
    assert.equal(tenThousand.status, 400);
    refused(tenThousand.body, /longer than 8192 characters/, '10 000 parentheses');
    const longest = `title contains '${'x'.repeat(MAX_QUERY_LENGTH - 17)}'`;
    assert.equal(longest.length, MAX_QUERY_LENGTH);
    assert.equal((await list(longest)).status, 200, 'a query of exactly the cap is read');
    refused((await list(`${longest} `)).body, /longer than/, 'one character more');
    // 10 000 balanced pairs are 20 000 characters: over GET Node's 16 KiB head limit answers 431 before any handler.
    const balanced = await h.raw('GET', `/storage/v2/files?q=${nested(10_000)}`);
    assert.ok(balanced.status === 431 || balanced.status === 400, `refused, not ${balanced.status}`);
    await balanced.arrayBuffer();
    assert.throws(
      () => parseQuery(nested(10_000), (id) => id),
      (e: unknown) => e instanceof StorageFailure && e.status === 400 && e.location === 'q',
    );
    assert.equal((await list('starred = true')).status, 200, 'the server still answers');
  });
});
