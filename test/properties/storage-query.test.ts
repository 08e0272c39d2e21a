import assert from 'node:assert/strict';
import { StorageFailure } from '../../devserver/storage/http.js';
import { MAX_QUERY_DEPTH, parseQuery } from '../../devserver/storage/query.js';
import type { FileRecord } from '../../devserver/storage/store.js';
import { listQuery } from '../../lib/cli/commands/storage/actions.js';
import { anyText, check, fc, fromAlphabet } from './fc.js';

/** A query as a tree, printed below and evaluated by a plain reference: the parser must agree with it. */
type Ast =
  | { op: 'and' | 'or'; items: Ast[] }
  | { op: 'not'; item: Ast }
  | { op: 'parents'; id: string }
  | { op: 'flag'; field: 'trashed' | 'starred' | 'hidden'; equal: boolean; value: boolean }
  | { op: 'text'; field: 'title' | 'mimeType'; how: '=' | '!=' | 'contains'; value: string }
  | { op: 'fullText'; value: string };

const word = fc.constantFrom('a', 'A', 'b', "it's", 'x\\y', 'text/plain', '');
const leaf: fc.Arbitrary<Ast> = fc.oneof(
  fc.constantFrom('p1', 'p2', "o'k").map((id): Ast => ({ op: 'parents', id })),
  fc.record({
    op: fc.constant('flag' as const),
    field: fc.constantFrom('trashed' as const, 'starred' as const, 'hidden' as const),
    equal: fc.boolean(),
    value: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('text' as const),
    field: fc.constantFrom('title' as const, 'mimeType' as const),
    how: fc.constantFrom('=' as const, '!=' as const, 'contains' as const),
    value: word,
  }),
  word.map((value): Ast => ({ op: 'fullText', value })),
);
const ast: fc.Arbitrary<Ast> = fc.letrec<{ node: Ast }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ op: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ op: fc.constant('not' as const), item: tie('node') }),
  ),
})).node;

const quote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
function print(node: Ast, caps: boolean): string {
  const kw = (k: string) => (caps ? k.toUpperCase() : k);
  switch (node.op) {
    case 'and':
    case 'or':
      return node.items.map((item) => `(${print(item, caps)})`).join(` ${kw(node.op)} `);
    case 'not':
      return `${kw('not')} (${print(node.item, caps)})`;
    case 'parents':
      return `${quote(node.id)} ${kw('in')} parents`;
    case 'flag':
      return `${node.field} ${node.equal ? '=' : '!='} ${node.value}`;
    case 'text':
      return `${node.field} ${node.how} ${quote(node.value)}`;
    case 'fullText':
      return `fullText contains ${quote(node.value)}`;
  }
}
function evaluate(node: Ast, file: FileRecord, trashed: boolean): boolean {
  switch (node.op) {
    case 'and':
      return node.items.every((item) => evaluate(item, file, trashed));
    case 'or':
      return node.items.some((item) => evaluate(item, file, trashed));
    case 'not':
      return !evaluate(node.item, file, trashed);
    case 'parents':
      return file.parents.includes(node.id);
    case 'flag':
      return ((node.field === 'trashed' ? trashed : file.labels[node.field]) === node.value) === node.equal;
    case 'text': {
      const have = file[node.field];
      if (node.how === 'contains') return node.field === 'title' ? have.toLowerCase().includes(node.value.toLowerCase()) : have.includes(node.value);
      return (have === node.value) === (node.how === '=');
    }
    case 'fullText':
      return `${file.title}\n${file.description ?? ''}`
        .toLowerCase()
        .split('\n')
        .some((part) => part.includes(node.value.toLowerCase()));
  }
}

const file: fc.Arbitrary<{ record: FileRecord; trashed: boolean }> = fc
  .record({
    title: word,
    mimeType: word,
    description: fc.option(word, { nil: undefined }),
    parents: fc.subarray(['p1', 'p2', "o'k"]),
    starred: fc.boolean(),
    hidden: fc.boolean(),
    trashed: fc.boolean(),
  })
  .map(({ starred, hidden, trashed, ...rest }) => ({
    record: {
      ...rest,
      id: 'f',
      labels: { starred, hidden, trashed, restricted: false, viewed: false },
      explicitlyTrashed: trashed,
      createdDate: '2024-01-01T00:00:00.000Z',
      modifiedDate: '2024-01-01T00:00:00.000Z',
      version: 1,
      properties: [],
      seq: 1,
    } as unknown as FileRecord,
    trashed,
  }));

const nearQuery = fromAlphabet(
  [
    'title',
    'trashed',
    'modifiedDate',
    ' ',
    '=',
    '!=',
    '<',
    '!',
    'contains',
    'in',
    'parents',
    'and',
    'or',
    'not',
    '(',
    ')',
    "'",
    "\\'",
    '\\',
    'true',
    "'2024-02-30'",
    "'2024-01-01T00:00:00+24:00'",
    "'x'",
    '"',
    'é',
  ],
  14,
);

describe('PROP-STORAGE-QUERY: the storage q search language the dev server reads, and the query gantry storage ls builds', () => {
  it('PROP-STORAGE-QUERY: parseQuery answers a predicate or a 400 StorageFailure at location q, whatever the text, however deep', () => {
    const deep = fc.nat({ max: MAX_QUERY_DEPTH * 2 }).map((n) => `${'not ('.repeat(n)}trashed = true${')'.repeat(n)}`);
    check(
      anyText(fc.oneof(nearQuery, deep)),
      (q) => {
        try {
          parseQuery(q, (id) => id);
        } catch (error) {
          assert.ok(error instanceof StorageFailure, `threw ${(error as Error).constructor.name}: ${(error as Error).message}`);
          assert.equal(error.status, 400);
        }
      },
      800,
    );
  });

  it('PROP-STORAGE-QUERY: a query printed from a tree selects exactly the files the tree does (keywords in any case, escapes in strings)', () => {
    check(
      fc.tuple(ast, fc.boolean(), fc.array(file, { minLength: 1, maxLength: 4 })),
      ([tree, caps, files]) => {
        const predicate = parseQuery(print(tree, caps), (id) => id);
        for (const f of files) assert.equal(predicate(f.record, f.trashed), evaluate(tree, f.record, f.trashed), print(tree, caps));
      },
      400,
    );
  });

  it('PROP-STORAGE-QUERY: ls wraps any non-empty query the service accepts into one it accepts, which selects a subset of what the query does', () => {
    check(
      fc.tuple(
        fc.oneof(
          ast.map((t) => print(t, false)),
          nearQuery,
        ),
        fc.boolean(),
        fc.array(file, { minLength: 1, maxLength: 3 }),
      ),
      ([query, folder, files]) => {
        if (query.trim() === '') return; // ls refuses an empty --query before it builds anything
        let own: ReturnType<typeof parseQuery>;
        try {
          own = parseQuery(query, (id) => id);
        } catch {
          return;
        }
        let wrapped: string;
        try {
          wrapped = listQuery('p1', { folder, query });
        } catch {
          return; // --trashed with a query naming trashed: refused before sending
        }
        const predicate = parseQuery(wrapped, (id) => id);
        for (const f of files) if (predicate(f.record, f.trashed)) assert.ok(own(f.record, f.trashed), `${wrapped} selects a file ${query} does not`);
      },
      400,
    );
  });
});
