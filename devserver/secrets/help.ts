/**
 * `?help=1`: `{help, openapi}` where `openapi` is an OpenAPI 3.0.2 document for the queried path and the paths
 * below it, with its paths written relative to the queried path (querying `secret/` gives `/data/{path}`,
 * querying `secret/data/` gives `/{path}`, querying `secret/data/app` gives `/`).
 */
import type { Mount } from './state.js';

interface PathPattern {
  pattern: string;
  synopsis: string;
  operations: Array<'get' | 'post' | 'patch' | 'delete' | 'list'>;
  fields?: Record<string, Field>;
}

interface Field {
  type: string;
  description: string;
}

const field =
  (type: string) =>
  (description: string): Field => ({ type, description });
const integer = field('integer');
const boolean = field('boolean');
const string = field('string');
const object = field('object');
const array = field('array');

const KV2_PATTERNS: PathPattern[] = [
  {
    pattern: 'config',
    synopsis: 'Configures settings for the KV store.',
    operations: ['get', 'post'],
    fields: {
      max_versions: integer('Versions to keep for each key; 0 means 10.'),
      cas_required: boolean('Require the cas option on every write.'),
      delete_version_after: string('Delete versions this long after they are written; negative disables.'),
    },
  },
  {
    pattern: 'data/{path}',
    synopsis: 'Write, patch, read and delete data in the key-value store.',
    operations: ['get', 'post', 'patch', 'delete'],
    fields: {
      data: object('The contents of the data map will be stored and returned on read.'),
      options: object('Options for writing a KV entry; `cas` is the check-and-set version.'),
      version: integer('The version to return on a read (query parameter).'),
    },
  },
  {
    pattern: 'metadata/{path}',
    synopsis: 'Read, write and delete key metadata and settings; list keys.',
    operations: ['get', 'post', 'patch', 'delete', 'list'],
    fields: {
      max_versions: integer('Versions to keep for this key.'),
      cas_required: boolean('Require the cas option on every write of this key.'),
      delete_version_after: string('Delete versions of this key this long after they are written.'),
      custom_metadata: object('Up to 64 string pairs (keys up to 128 bytes, values up to 512 bytes).'),
    },
  },
  {
    pattern: 'delete/{path}',
    synopsis: 'Marks one or more versions as deleted.',
    operations: ['post'],
    fields: { versions: array('The versions to delete.') },
  },
  {
    pattern: 'undelete/{path}',
    synopsis: 'Undeletes one or more versions.',
    operations: ['post'],
    fields: { versions: array('The versions to undelete.') },
  },
  {
    pattern: 'destroy/{path}',
    synopsis: 'Permanently removes one or more versions.',
    operations: ['post'],
    fields: { versions: array('The versions to destroy.') },
  },
];

const KV1_PATTERNS: PathPattern[] = [
  {
    pattern: '{path}',
    synopsis: 'Pass-through secret storage: read, write, list and delete arbitrary JSON objects.',
    operations: ['get', 'post', 'delete', 'list'],
    fields: { ttl: string('Optional lease duration hint returned on read.') },
  },
];

/** Patterns relevant to `rel` (the path inside the mount), as paths relative to the queried path. */
export function relativePaths(patterns: PathPattern[], rel: string): Array<[string, PathPattern]> {
  const out: Array<[string, PathPattern]> = [];
  for (const p of patterns) {
    const literal = p.pattern.split('{')[0];
    const wildcard = p.pattern.includes('{path}');
    if (rel === p.pattern) out.push(['/', p]);
    else if (literal.startsWith(rel) && (rel === '' || rel.endsWith('/'))) out.push(['/' + p.pattern.slice(rel.length), p]);
    else if (wildcard && rel.startsWith(literal) && rel.length > literal.length) {
      out.push(['/', p]);
      if (rel.endsWith('/')) out.push(['/{path}', p]);
    }
  }
  return out;
}

function operationsFor(path: string, p: PathPattern, mountType: string) {
  const item: Record<string, unknown> = { description: p.synopsis };
  if (path.includes('{path}')) {
    item.parameters = [{ name: 'path', description: 'Location of the secret.', in: 'path', required: true, schema: { type: 'string' } }];
  }
  const id = `${mountType}-${p.pattern.replace(/[{}]/g, '').replace(/\//g, '-') || 'root'}`;
  for (const op of p.operations) {
    if (op === 'list') {
      item.get = {
        ...(item.get as object),
        parameters: [{ name: 'list', description: 'Must be set to `true`', in: 'query', required: true, schema: { type: 'string', enum: ['true'] } }],
      };
      continue;
    }
    const operation: Record<string, unknown> = {
      summary: p.synopsis,
      operationId: `${op}-${id}`,
      tags: ['secrets'],
      responses: op === 'get' ? { '200': { description: 'OK' } } : { '200': { description: 'OK' }, '204': { description: 'empty body' } },
    };
    if ((op === 'post' || op === 'patch') && p.fields) {
      operation.requestBody = {
        required: true,
        content: {
          [op === 'patch' ? 'application/merge-patch+json' : 'application/json']: {
            schema: { type: 'object', properties: p.fields },
          },
        },
      };
    }
    item[op] = { ...(item[op] as object), ...operation };
  }
  return item;
}

function document(paths: Record<string, unknown>) {
  return {
    openapi: '3.0.2',
    info: {
      title: 'Secrets service API (Gantry embedded server)',
      description: 'HTTP API of the embedded kv secrets server. Every path is relative to the queried path.',
      version: '1.0.0',
      license: { name: 'MPL-2.0', url: 'https://www.mozilla.org/en-US/MPL/2.0' },
    },
    paths,
    components: { schemas: {} },
  };
}

export function mountHelp(mount: Mount, rel: string) {
  const patterns = mount.version === 2 ? KV2_PATTERNS : KV1_PATTERNS;
  const matched = relativePaths(patterns, rel);
  const paths: Record<string, unknown> = {};
  for (const [path, p] of matched) paths[path] = operationsFor(path, p, mount.version === 2 ? 'kv-v2' : 'kv-v1');
  const description =
    mount.version === 2
      ? 'The kv engine (version 2) stores versioned key/value secrets under data/, with metadata/, delete/, undelete/, destroy/ and config.'
      : 'The kv engine (version 1) stores one JSON object per path, without versions.';
  const help = ['## DESCRIPTION', '', description, '', '## PATHS', '', ...matched.flatMap(([path, p]) => [`    ${path}`, `        ${p.synopsis}`, ''])].join(
    '\n',
  );
  return { help, openapi: document(paths), see_also: null };
}

export function genericHelp(description: string) {
  return {
    help: `## DESCRIPTION\n\n${description}\n`,
    openapi: document({ '/': { description } }),
    see_also: null,
  };
}
