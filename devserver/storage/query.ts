// Drive v2's search language (`q`) as far as our fields go, and the `fields` partial-response mask.
import { badRequest, type StorageFailure } from './http.js';
import type { FileRecord } from './store.js';

type Predicate = (file: FileRecord, trashed: boolean) => boolean;

/**
 * The longest `q` read, in characters. A GET's request head is already bounded by Node's 16 KiB header limit (431
 * above it); this cap is the parser's own, so that any transport gets a 400 in Drive's shape, and it bounds the work of
 * a listing, which evaluates the query against every file. 8 KiB is about 150 `'<id>' in parents` clauses — far above
 * any query a person or our command builds (`gantry storage ls` adds two clauses to the user's).
 */
export const MAX_QUERY_LENGTH = 8192;

/**
 * The deepest nesting of parentheses and `not`s. Parsing and evaluation recurse once per level, so a hostile
 * `((((…` cannot reach the stack's end; real queries nest two or three levels.
 */
export const MAX_QUERY_DEPTH = 64;

type Token =
  | { kind: 'word'; text: string; at: number }
  | { kind: 'string'; text: string; at: number }
  | { kind: 'op'; text: '=' | '!=' | '<' | '<=' | '>' | '>='; at: number }
  | { kind: '(' | ')'; at: number }
  | { kind: 'end'; at: number };

const invalid = (why: string, at: number): StorageFailure => badRequest(`Invalid query: ${why} at character ${at + 1}`, 'q');

function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') {
      i++;
    } else if (c === '(' || c === ')') {
      tokens.push({ kind: c, at: i++ });
    } else if (c === "'") {
      const at = i++;
      let text = '';
      for (;;) {
        if (i >= q.length) throw invalid('unterminated string', at);
        const d = q[i++]!;
        if (d === "'") break;
        if (d === '\\') {
          const e = q[i];
          if (e !== "'" && e !== '\\') throw invalid("unknown escape (only \\' and \\\\)", i - 1);
          text += e;
          i++;
        } else text += d;
      }
      tokens.push({ kind: 'string', text, at });
    } else if (c === '=') {
      tokens.push({ kind: 'op', text: '=', at: i++ });
    } else if (c === '!' || c === '<' || c === '>') {
      const at = i;
      const two = q[i + 1] === '=';
      if (c === '!' && !two) throw invalid("'!' without '='", at);
      i += two ? 2 : 1;
      tokens.push({ kind: 'op', text: (two ? `${c}=` : c) as '!=' | '<' | '>' | '<=' | '>=', at });
    } else if (/[A-Za-z]/.test(c)) {
      const at = i;
      while (i < q.length && /[A-Za-z0-9_]/.test(q[i]!)) i++;
      tokens.push({ kind: 'word', text: q.slice(at, i), at });
    } else {
      throw invalid(`unexpected ${JSON.stringify(c)}`, i);
    }
  }
  tokens.push({ kind: 'end', at: q.length });
  return tokens;
}

/** An RFC 3339 date (`2024-05-01`) or date-time (`2024-05-01T12:00:00`, fraction and offset optional; UTC without one) in ms. */
function rfc3339(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))?)?$/.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((k) => Number(m[k] ?? 0)) as [number, number, number, number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysIn = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (daysIn === undefined || day < 1 || day > daysIn || hour > 23 || minute > 59 || second > 60) return undefined;
  const offsetHours = Number(m[10] ?? 0);
  const offsetMinutes = Number(m[11] ?? 0);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)));
  return date.getTime() - (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
}

const BOOLEAN_FIELDS = new Set(['trashed', 'starred', 'hidden']);
const DATE_FIELDS = new Set(['modifieddate', 'createddate']);

/**
 * Drive v2's search language as far as our fields go. Grammar (keywords and field names in any case):
 *
 *     query   := or
 *     or      := and ('or' and)*
 *     and     := not ('and' not)*
 *     not     := 'not' not | '(' or ')' | term
 *     term    := string 'in' 'parents'
 *              | ('trashed' | 'starred' | 'hidden') ('=' | '!=') ('true' | 'false')
 *              | ('title' | 'mimeType') ('=' | '!=' | 'contains') string
 *              | ('modifiedDate' | 'createdDate') ('<' | '<=' | '>' | '>=' | '=' | '!=') string   (RFC 3339)
 *              | 'fullText' 'contains' string                 (the title and description, case-insensitive)
 *     string  := "'" (any character but ' and \ | "\'" | "\\")* "'"
 *
 * `title contains` ignores case, `mimeType contains` does not; `=` and `!=` compare exactly. An absent or empty `q`
 * matches every file. Anything else — an unknown field or operator, an unbalanced parenthesis, a dangling `and`, an
 * unterminated string, a query of only spaces, `()` — is 400 invalid at location `q`, as is a query longer than
 * MAX_QUERY_LENGTH or nested deeper than MAX_QUERY_DEPTH.
 */
export function parseQuery(q: string | null, resolveId: (id: string) => string): Predicate {
  if (q === null || q === '') return () => true;
  if (q.length > MAX_QUERY_LENGTH) throw badRequest(`Invalid query: longer than ${MAX_QUERY_LENGTH} characters`, 'q');
  const tokens = tokenize(q);
  if (tokens.length === 1) throw invalid('no search term', 0);
  let pos = 0;
  const peek = () => tokens[pos]!;
  const keyword = (word: string) => {
    const t = peek();
    return t.kind === 'word' && t.text.toLowerCase() === word;
  };
  const describe = (t: Token) =>
    t.kind === 'end' ? 'the end' : t.kind === 'word' ? `'${t.text}'` : t.kind === 'string' ? 'a string' : t.kind === 'op' ? `'${t.text}'` : `'${t.kind}'`;

  /** Operands of `next` joined by `word` (or, and): true when some (or) or every (and) operand is. */
  const joined =
    (word: 'or' | 'and', next: (depth: number) => Predicate) =>
    (depth: number): Predicate => {
      const items = [next(depth)];
      while (keyword(word)) {
        pos++;
        items.push(next(depth));
      }
      if (items.length === 1) return items[0]!;
      return word === 'or' ? (file, trashed) => items.some((p) => p(file, trashed)) : (file, trashed) => items.every((p) => p(file, trashed));
    };
  const parseAnd = joined('and', (depth) => parseNot(depth));
  const parseOr = joined('or', parseAnd);
  const parseNot = (depth: number): Predicate => {
    const t = peek();
    if (keyword('not') || t.kind === '(') {
      if (depth >= MAX_QUERY_DEPTH) throw invalid(`nested deeper than ${MAX_QUERY_DEPTH} levels`, t.at);
      pos++;
      if (t.kind === 'word') {
        const inner = parseNot(depth + 1);
        return (file, trashed) => !inner(file, trashed);
      }
      if (peek().kind === ')') throw invalid('empty parentheses', t.at);
      const inner = parseOr(depth + 1);
      if (peek().kind !== ')') throw invalid(`unbalanced '(' (${describe(peek())} where ')' was expected)`, t.at);
      pos++;
      return inner;
    }
    return parseTerm();
  };
  const expectString = (what: string): string => {
    const t = tokens[pos++]!;
    if (t.kind !== 'string') throw invalid(`${what} needs a quoted string, not ${describe(t)}`, t.at);
    return t.text;
  };
  const parseTerm = (): Predicate => {
    const t = tokens[pos++]!;
    if (t.kind === 'string') {
      const collection = tokens[pos++]!;
      const name = tokens[pos++]!;
      if (collection.kind !== 'word' || collection.text.toLowerCase() !== 'in')
        throw invalid(`'in' expected after a string, not ${describe(collection)}`, collection.at);
      if (name.kind !== 'word' || name.text.toLowerCase() !== 'parents') throw invalid(`unknown collection ${describe(name)} (only parents)`, name.at);
      const parent = resolveId(t.text);
      return (file) => file.parents.includes(parent);
    }
    if (t.kind !== 'word') throw invalid(`a search term expected, not ${describe(t)}`, t.at);
    const field = t.text.toLowerCase();
    if (field === 'and' || field === 'or') throw invalid(`'${t.text}' without a term before it`, t.at);
    const op = tokens[pos++]!;
    const opText = op.kind === 'op' ? op.text : op.kind === 'word' ? op.text.toLowerCase() : undefined;
    const badOperator = () => invalid(`${describe(op)} is no operator of ${t.text}`, op.at);
    if (BOOLEAN_FIELDS.has(field)) {
      if (opText !== '=' && opText !== '!=') throw badOperator();
      const value = tokens[pos++]!;
      const text = value.kind === 'word' ? value.text.toLowerCase() : '';
      if (text !== 'true' && text !== 'false') throw invalid(`${t.text} compares with true or false, not ${describe(value)}`, value.at);
      const want = (text === 'true') === (opText === '=');
      const label = field as 'trashed' | 'starred' | 'hidden';
      return (file, trashed) => (label === 'trashed' ? trashed : file.labels[label]) === want;
    }
    if (field === 'title' || field === 'mimetype') {
      if (opText !== '=' && opText !== '!=' && opText !== 'contains') throw badOperator();
      const value = expectString(t.text);
      const key = field === 'title' ? 'title' : 'mimeType';
      if (opText === 'contains') {
        if (key === 'mimeType') return (file) => file.mimeType.includes(value);
        const lower = value.toLowerCase();
        return (file) => file.title.toLowerCase().includes(lower);
      }
      const equal = opText === '=';
      return (file) => (file[key] === value) === equal;
    }
    if (DATE_FIELDS.has(field)) {
      if (op.kind !== 'op') throw badOperator();
      const valueToken = peek();
      const when = rfc3339(expectString(t.text));
      if (when === undefined) throw invalid(`${t.text} compares with an RFC 3339 date or date-time`, valueToken.at);
      const key = field === 'modifieddate' ? 'modifiedDate' : 'createdDate';
      const compare = {
        '=': (a: number) => a === when,
        '!=': (a: number) => a !== when,
        '<': (a: number) => a < when,
        '<=': (a: number) => a <= when,
        '>': (a: number) => a > when,
        '>=': (a: number) => a >= when,
      }[op.text];
      return (file) => compare(Date.parse(file[key]));
    }
    if (field === 'fulltext') {
      if (opText !== 'contains') throw badOperator();
      const lower = expectString(t.text).toLowerCase();
      return (file) => file.title.toLowerCase().includes(lower) || (file.description ?? '').toLowerCase().includes(lower);
    }
    throw invalid(`unknown field ${describe(t)}`, t.at);
  };

  const predicate = parseOr(0);
  const rest = peek();
  if (rest.kind !== 'end') throw invalid(rest.kind === ')' ? "unbalanced ')'" : `${describe(rest)} where 'and', 'or' or the end was expected`, rest.at);
  return predicate;
}

const ORDER_KEYS: Record<string, (f: FileRecord) => string | number> = {
  createdDate: (f) => f.createdDate,
  modifiedDate: (f) => f.modifiedDate,
  modifiedByMeDate: (f) => f.modifiedDate,
  lastViewedByMeDate: (f) => f.lastViewedByMeDate ?? '',
  recency: (f) => f.modifiedDate,
  title: (f) => f.title,
  title_natural: (f) => f.title.toLowerCase(),
  folder: (f) => (f.mimeType === 'application/vnd.google-apps.folder' ? 0 : 1),
  quotaBytesUsed: (f) => f.fileSize ?? 0,
  starred: (f) => (f.labels.starred ? 0 : 1),
};

/** `orderBy`: comma-separated keys, each optionally ` desc`; ties (and no orderBy) in creation order. */
export function orderBy(spec: string | null): (a: FileRecord, b: FileRecord) => number {
  const keys = (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const [name, dir, extra] = part.split(/\s+/);
      const key = ORDER_KEYS[name!];
      if (!key || extra !== undefined || (dir !== undefined && dir.toLowerCase() !== 'desc' && dir.toLowerCase() !== 'asc'))
        throw badRequest(`Invalid orderBy: ${part}`, 'orderBy');
      return { key, sign: dir?.toLowerCase() === 'desc' ? -1 : 1 };
    });
  return (a, b) => {
    for (const { key, sign } of keys) {
      const x = key(a);
      const y = key(b);
      if (x < y) return -sign;
      if (x > y) return sign;
    }
    return a.seq - b.seq;
  };
}

export type FieldMask = Map<string, FieldMask | true>;

/** Parses Google's `fields` syntax: `a,b/c,items(id,title),nextPageToken`. */
export function parseFields(fields: string | null): FieldMask | undefined {
  if (fields === null || fields.trim() === '' || fields.trim() === '*') return undefined;
  let i = 0;
  const parseList = (depth: number): FieldMask => {
    const mask: FieldMask = new Map();
    while (i < fields.length) {
      let name = '';
      while (i < fields.length && /[A-Za-z0-9_*]/.test(fields[i]!)) name += fields[i++];
      if (name === '') throw badRequest(`Invalid field selection ${fields}`, 'fields');
      let target = mask;
      while (fields[i] === '/') {
        i++;
        const sub = target.get(name);
        const next: FieldMask = sub instanceof Map ? sub : new Map();
        target.set(name, next);
        target = next;
        name = '';
        while (i < fields.length && /[A-Za-z0-9_*]/.test(fields[i]!)) name += fields[i++];
        if (name === '') throw badRequest(`Invalid field selection ${fields}`, 'fields');
      }
      if (fields[i] === '(') {
        i++;
        target.set(name, parseList(depth + 1));
        if (fields[i] !== ')') throw badRequest(`Invalid field selection ${fields}`, 'fields');
        i++;
      } else target.set(name, true);
      if (fields[i] === ',') {
        i++;
        continue;
      }
      if (fields[i] === ')' && depth > 0) return mask;
      if (i < fields.length) throw badRequest(`Invalid field selection ${fields}`, 'fields');
    }
    if (depth > 0) throw badRequest(`Invalid field selection ${fields}`, 'fields');
    return mask;
  };
  return parseList(0);
}

export function applyFields(value: unknown, mask: FieldMask | undefined): unknown {
  if (!mask || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => applyFields(v, mask));
  if (mask.has('*')) return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of mask) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    out[key] = sub === true ? v : applyFields(v, sub);
  }
  return out;
}
