// A small subset of Drive's search query language (`q`) and the `fields` partial-response mask.
import { badRequest } from './http.js';
import type { FileRecord } from './store.js';

type Predicate = (file: FileRecord, trashed: boolean) => boolean;

const CLAUSE = /^\s*(?:'((?:[^'\\]|\\.)*)'\s+in\s+parents|(trashed|starred|hidden)\s*(=|!=)\s*(true|false)|(title|mimeType)\s*(=|!=|contains)\s*'((?:[^'\\]|\\.)*)')\s*$/i;

const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

/**
 * Clauses joined by `and` (no `or`, `not` or parentheses): `'<id>' in parents`, `trashed = true|false` (also starred,
 * hidden), `title = | != | contains '…'`, `mimeType = | != | contains '…'`. Anything else is 400 Invalid query.
 */
export function parseQuery(q: string | null, resolveId: (id: string) => string): Predicate {
  if (q === null || q.trim() === '') return () => true;
  const parts = splitAnd(q);
  const predicates: Predicate[] = parts.map((part) => {
    const m = CLAUSE.exec(part);
    if (!m) throw badRequest('Invalid query', 'q');
    if (m[1] !== undefined) {
      const parent = resolveId(unescape(m[1]));
      return (file) => file.parents.includes(parent);
    }
    if (m[2] !== undefined) {
      const field = m[2].toLowerCase() as 'trashed' | 'starred' | 'hidden';
      const want = m[4]!.toLowerCase() === 'true';
      const equal = m[3] === '=';
      return (file, trashed) => ((field === 'trashed' ? trashed : file.labels[field]) === want) === equal;
    }
    const field = m[5]!.toLowerCase() === 'title' ? 'title' : 'mimeType';
    const op = m[6]!.toLowerCase();
    const value = unescape(m[7]!);
    return (file) => {
      const actual = file[field];
      if (op === 'contains') return field === 'title' ? actual.toLowerCase().includes(value.toLowerCase()) : actual.includes(value);
      return (actual === value) === (op === '=');
    };
  });
  return (file, trashed) => predicates.every((p) => p(file, trashed));
}

/** Splits on ` and ` outside quotes. */
function splitAnd(q: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < q.length; i++) {
    const c = q[i]!;
    if (c === '\\' && quoted) {
      current += c + (q[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === "'") quoted = !quoted;
    if (!quoted && /^\sand\s/i.test(q.slice(i, i + 5))) {
      parts.push(current);
      current = '';
      i += 4;
      continue;
    }
    current += c;
  }
  if (quoted) throw badRequest('Invalid query', 'q');
  parts.push(current);
  return parts;
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
  const keys = (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean).map((part) => {
    const [name, dir, extra] = part.split(/\s+/);
    const key = ORDER_KEYS[name!];
    if (!key || extra !== undefined || (dir !== undefined && dir.toLowerCase() !== 'desc' && dir.toLowerCase() !== 'asc')) throw badRequest(`Invalid orderBy: ${part}`, 'orderBy');
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
