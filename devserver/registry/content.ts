// Documentation and schema data of a module version (the "module-content" objects of a module detail),
// read from its .tf files and README. A light scanner, not an HCL parser: it finds top-level blocks and the
// few attributes the registry reports. What it cannot read it leaves out (REG-CONTENT-TRIMMED).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createReadStream } from 'node:fs';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import type { Artifact } from './catalog.js';

export interface ModuleContent {
  path: string;
  readme: string;
  empty: boolean;
  inputs: { name: string; description: string; default: string; required: boolean }[];
  outputs: { name: string; description: string }[];
  dependencies: { name: string; source: string; version: string }[];
  resources: { name: string; type: string }[];
  provider_dependencies: { name: string; namespace: string; source: string; version: string }[];
}

/** Trimmed content for versions whose files the server does not read (bz2/xz archives, external locations). */
export type TrimmedContent = Pick<ModuleContent, 'path' | 'empty'>;

export interface VersionContent {
  root: ModuleContent | TrimmedContent;
  submodules: (ModuleContent | TrimmedContent)[];
}

const MAX_TEXT_FILE = 1024 * 1024;
const MAX_FILES = 2000;

/** Text files of interest, keyed by relative POSIX path. */
type Files = Map<string, string>;

function interesting(rel: string): boolean {
  const base = rel.split('/').pop() ?? '';
  return base.endsWith('.tf') || /^readme(\.md)?$/i.test(base);
}

async function readDirectory(root: string): Promise<Files> {
  const files: Files = new Map();
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || files.size >= MAX_FILES) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), childRel);
      else if (entry.isFile() && interesting(childRel)) {
        const text = await readFile(path.join(dir, entry.name), 'utf8');
        if (text.length <= MAX_TEXT_FILE) files.set(childRel, text);
      }
    }
  };
  await walk(root, '');
  return files;
}

async function readTarball(input: NodeJS.ReadableStream, gzip: boolean): Promise<Files> {
  const files: Files = new Map();
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      gzip,
      // strict: a stream that is not a tar archive is an error (trimmed content), not an empty module.
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        const rel = entry.path.replace(/^\.\//, '');
        if (entry.type !== 'File' || !interesting(rel) || entry.size > MAX_TEXT_FILE || files.size >= MAX_FILES || rel.split('/').includes('..')) {
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => files.set(rel, Buffer.concat(chunks).toString('utf8')));
      },
    });
    parser.on('error', reject);
    parser.on('end', () => resolve());
    input.on('error', reject);
    input.pipe(parser);
  });
  return files;
}

async function readZip(source: string | Buffer): Promise<Files> {
  const files: Files = new Map();
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    const done = (error: Error | null, opened: yauzl.ZipFile) => (error ? reject(error) : resolve(opened));
    if (typeof source === 'string') yauzl.open(source, { lazyEntries: true }, done);
    else yauzl.fromBuffer(source, { lazyEntries: true }, done);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        const rel = entry.fileName.replace(/^\.\//, '');
        const wanted =
          !rel.endsWith('/') && interesting(rel) && entry.uncompressedSize <= MAX_TEXT_FILE && files.size < MAX_FILES && !rel.split('/').includes('..');
        if (!wanted) return zip.readEntry();
        zip.openReadStream(entry, (error, stream) => {
          if (error) return reject(error);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            files.set(rel, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return files;
}

/** Reads what the server can read of a version; undefined content means "trimmed". */
/** Zip needs random access: an S3 zip is read into memory, up to this size, to describe it. */
const MAX_REMOTE_ZIP = 16 * 1024 * 1024;

/** Opens an S3 object (supplied by the S3 store). */
export type ObjectOpener = (bucket: string, key: string) => Promise<NodeJS.ReadableStream>;

async function readAll(input: NodeJS.ReadableStream, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    size += (chunk as Buffer).length;
    if (size > max) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads what the server can read of a version; what it cannot is "trimmed" content. */
export async function readVersionContent(artifact: Artifact, openObject?: ObjectOpener): Promise<VersionContent> {
  let files: Files | undefined;
  try {
    if (artifact.kind === 'directory') files = await readDirectory(artifact.path);
    else if (artifact.kind === 'file' || (artifact.kind === 's3' && openObject)) {
      const open = () => (artifact.kind === 'file' ? Promise.resolve(createReadStream(artifact.path)) : openObject!(artifact.bucket, artifact.key));
      if (artifact.extension === '.tar.gz' || artifact.extension === '.tgz') files = await readTarball(await open(), true);
      else if (artifact.extension === '.tar') files = await readTarball(await open(), false);
      else if (artifact.extension === '.zip') {
        const source = artifact.kind === 'file' ? artifact.path : await readAll(await open(), MAX_REMOTE_ZIP);
        if (source !== undefined) files = await readZip(source);
      }
    }
  } catch {
    files = undefined;
  }
  if (!files) return { root: { path: '', empty: false }, submodules: [] };
  return describeFiles(files);
}

export function describeFiles(files: Files): VersionContent {
  const folders = new Map<string, Files>();
  for (const [rel, text] of files) {
    const dir = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    const bucket = folders.get(dir) ?? new Map();
    bucket.set(rel.slice(dir ? dir.length + 1 : 0), text);
    folders.set(dir, bucket);
  }
  const root = describeFolder('', folders.get('') ?? new Map());
  const submodules = [...folders.keys()]
    .filter((dir) => /^modules\/[^/]+$/.test(dir))
    .sort()
    .map((dir) => describeFolder(dir, folders.get(dir)!));
  return { root, submodules };
}

function describeFolder(dir: string, files: Files): ModuleContent {
  const content: ModuleContent = {
    path: dir,
    readme: '',
    empty: true,
    inputs: [],
    outputs: [],
    dependencies: [],
    resources: [],
    provider_dependencies: [],
  };
  for (const name of [...files.keys()].sort()) {
    const text = files.get(name)!;
    if (/^readme(\.md)?$/i.test(name)) {
      content.readme = text;
      continue;
    }
    content.empty = false;
    for (const block of topLevelBlocks(stripComments(text))) {
      const [first, second] = block.labels;
      if (block.type === 'variable' && first) {
        const defaultValue = attributeRaw(block.body, 'default');
        content.inputs.push({
          name: first,
          description: stringAttribute(block.body, 'description'),
          default: defaultValue ?? '',
          required: defaultValue === undefined,
        });
      } else if (block.type === 'output' && first) {
        content.outputs.push({ name: first, description: stringAttribute(block.body, 'description') });
      } else if (block.type === 'resource' && first && second) {
        content.resources.push({ name: second, type: first });
      } else if (block.type === 'module' && first) {
        content.dependencies.push({ name: first, source: stringAttribute(block.body, 'source'), version: stringAttribute(block.body, 'version') });
      } else if (block.type === 'terraform') {
        content.provider_dependencies.push(...requiredProviders(block.body));
      }
    }
  }
  return content;
}

function stripComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const skip = ch === '"' ? endOfString(text, i) : ch === '<' ? endOfHeredoc(text, i) : undefined;
    if (skip !== undefined) {
      out += text.slice(i, skip);
      i = skip;
    } else if (ch === '#' || (ch === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** End of a quoted string starting at `start`, stepping over escapes and `${ ... }` interpolations (which may quote). */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\\') i += 2;
    else if ((ch === '$' || ch === '%') && text[i + 1] === '{') i = endOfTemplate(text, i + 2);
    else if (ch === '"' || ch === '\n') return i + 1;
    else i++;
  }
  return text.length;
}

function endOfTemplate(text: string, start: number): number {
  let depth = 1;
  let i = start;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      i = endOfString(text, i);
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i + 1;
    i++;
  }
  return text.length;
}

/** If a heredoc (`<<EOT` or `<<-EOT`) starts at `start`, where it ends (after its closing marker line). */
function endOfHeredoc(text: string, start: number): number | undefined {
  const opening = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/.exec(text.slice(start, start + 80));
  if (!opening) return undefined;
  const closing = new RegExp(`\\n[ \\t]*${opening[1]}[ \\t]*(\\r?\\n|$)`).exec(text.slice(start + opening[0].length - 1));
  return closing ? start + opening[0].length - 1 + closing.index + closing[0].length : text.length;
}

interface Block {
  type: string;
  labels: string[];
  body: string;
}

function topLevelBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const header = /(^|\n)[ \t]*([A-Za-z_][\w-]*)((?:[ \t]+"[^"\n]*")*)[ \t]*\{/g;
  let match: RegExpExecArray | null;
  while ((match = header.exec(text))) {
    const open = header.lastIndex - 1;
    const close = matchingBrace(text, open);
    const labels = [...match[3]!.matchAll(/"([^"\n]*)"/g)].map((m) => m[1]!);
    blocks.push({ type: match[2]!, labels, body: text.slice(open + 1, close) });
    header.lastIndex = close + 1;
  }
  return blocks;
}

function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    const skip = ch === '"' ? endOfString(text, i) : ch === '<' ? endOfHeredoc(text, i) : undefined;
    if (skip !== undefined) i = skip - 1;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return text.length;
}

function stringAttribute(body: string, name: string): string {
  const quoted = new RegExp(`(^|\\n)[ \\t]*${name}[ \\t]*=[ \\t]*"((?:[^"\\\\\\n]|\\\\.)*)"`).exec(body);
  if (quoted) return unquote(quoted[2]!);
  const heredoc = new RegExp(
    `(^|\\n)[ \\t]*${name}[ \\t]*=[ \\t]*<<(-?)([A-Za-z_][A-Za-z0-9_-]*)[ \\t]*\\r?\\n([\\s\\S]*?)\\r?\\n[ \\t]*\\3[ \\t]*(\\r?\\n|$)`,
  ).exec(body);
  if (!heredoc) return '';
  const lines = heredoc[4]!.split(/\r?\n/);
  if (heredoc[2] !== '-') return lines.join('\n');
  // <<- strips the indentation common to all lines, as HCL does.
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^[ \t]*/.exec(l)![0].length));
  return lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n');
}

function unquote(inner: string): string {
  try {
    return JSON.parse(`"${inner}"`) as string;
  } catch {
    return inner;
  }
}

/** The attribute's expression as written (single line, or a bracketed value up to its closing bracket). */
function attributeRaw(body: string, name: string): string | undefined {
  const match = new RegExp(`(^|\\n)[ \\t]*${name}[ \\t]*=[ \\t]*`).exec(body);
  if (!match) return undefined;
  const start = match.index + match[0].length;
  const first = body[start];
  if (first === '{' || first === '[') {
    const closer = first === '{' ? '}' : ']';
    let depth = 0;
    for (let i = start; i < body.length; i++) {
      if (body[i] === '"') i = endOfString(body, i) - 1;
      else if (body[i] === first) depth++;
      else if (body[i] === closer && --depth === 0) return body.slice(start, i + 1);
    }
  }
  const end = body.indexOf('\n', start);
  const raw = body.slice(start, end < 0 ? undefined : end).trim();
  return raw.startsWith('"') && raw.endsWith('"') && raw.length > 1 ? unquote(raw.slice(1, -1)) : raw;
}

function requiredProviders(terraformBody: string): ModuleContent['provider_dependencies'] {
  const found = /required_providers[ \t]*\{/.exec(terraformBody);
  if (!found) return [];
  const open = found.index + found[0].length - 1;
  const inner = terraformBody.slice(open + 1, matchingBrace(terraformBody, open));
  const providers: ModuleContent['provider_dependencies'] = [];
  for (const entry of inner.matchAll(/([A-Za-z_][\w-]*)[ \t]*=[ \t]*\{([^}]*)\}/g)) {
    const source = stringAttribute(entry[2]!, 'source');
    providers.push({
      name: entry[1]!,
      namespace: source.includes('/') ? source.split('/').slice(-2)[0]! : '',
      source,
      version: stringAttribute(entry[2]!, 'version'),
    });
  }
  return providers;
}
