// What `gantry storage` checks before anything is sent — ids, flags, local paths — every refusal a usage error (exit 2)
// naming what was typed, and where an upload keeps its session file. Light at load: no library of lib/storage.
import { terminalText } from '../../../terminal-text.js';
import { createHash } from 'node:crypto';
import { chmod, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { shown, UsageError } from '../../../errors.js';
import { ensureFolder, missingPathHint, missingPathText } from '../../../local-paths.js';
import { parseServiceUrl } from '../../../service-url.js';
import { usage } from '../../context.js';

/** Drive's ids are letters, digits, `-` and `_` (`root` names the root folder). */
const ID = /^[A-Za-z0-9_-]{1,256}$/;

/** A file or folder id as typed: refused (exit 2) unless it has an id's characters. */
export function checkId(value: string, what = 'the file id'): string {
  if (!ID.test(value)) {
    throw usage(
      `${what} ${shown(value.slice(0, 80))} is not an id: ids are letters, digits, - and _`,
      'the ids are in the first column of `gantry storage ls` (root is the root folder)',
    );
  }
  return value;
}

// A media type as it may stand in a header: type/subtype and parameters, no control characters.
const MEDIA_TYPE = /^[\w!#$&^.+-]{1,127}\/[\w!#$&^.+-]{1,127}(?:\s*;[\x20-\x7e]*)?$/;

export function checkMediaType(value: string, flag = '--mime'): string {
  if (!MEDIA_TYPE.test(value))
    throw usage(`${flag} ${shown(value.slice(0, 80))} is not a media type`, `e.g. ${flag} text/plain, application/pdf or application/octet-stream`);
  return value;
}

/** `--max <n>`: a whole number from 1 to 1,000,000. */
export function checkCount(value: string, flag: string): number {
  if (!/^\d{1,7}$/.test(value.trim()) || Number(value) < 1 || Number(value) > 1_000_000)
    throw usage(`${flag} takes a whole number from 1 to 1000000, got ${shown(value.slice(0, 40))}`);
  return Number(value);
}

/** A title as typed (`--name`, mkdir): not empty, no control characters. */
export function checkTitle(value: string, what: string): string {
  if (value.trim() === '') throw usage(`${what} is empty`);
  if (shown(value) !== value) throw usage(`${what} ${shown(value.slice(0, 80))} holds control characters`);
  if (value.length > 1024) throw usage(`${what} is ${value.length} characters; keep it under 1024`);
  return value;
}

export const ROLES = ['reader', 'commenter', 'writer', 'owner'] as const;
export const GRANTEE_TYPES = ['user', 'group', 'domain', 'anyone'] as const;

export interface ShareTarget {
  role: (typeof ROLES)[number];
  type: (typeof GRANTEE_TYPES)[number];
  /** The email address (user, group) or domain (domain); none for anyone. */
  value: string | undefined;
}

/** `share`'s flags: the role, whom (an email for a user or group, a domain, or anyone), checked against each other. */
export function checkShare(flags: { role?: string; type?: string; email?: string; domain?: string }): ShareTarget {
  const role = flags.role as ShareTarget['role'];
  if (!ROLES.includes(role)) throw usage(`--role ${shown(String(flags.role).slice(0, 40))} is not a role`, `one of ${ROLES.join(', ')}`);
  if (flags.type === undefined && flags.email !== undefined && flags.domain !== undefined)
    throw usage('--email and --domain name two grantees: give one (a user or group by --email, a whole domain by --domain)');
  const type = (flags.type ?? (flags.domain !== undefined && flags.email === undefined ? 'domain' : 'user')) as ShareTarget['type'];
  if (!GRANTEE_TYPES.includes(type))
    throw usage(`--type ${shown(String(flags.type).slice(0, 40))} is not a grantee type`, `one of ${GRANTEE_TYPES.join(', ')}`);
  if (type === 'user' || type === 'group') {
    if (flags.domain !== undefined) throw usage(`--domain is for --type domain, not ${type}`);
    if (flags.email === undefined)
      throw usage(`--type ${type} needs --email <address>`, 'e.g. gantry storage share <id> --email ana@example.com --role reader');
    const email = flags.email.trim();
    if (email.length > 254 || !/^[^\s@"<>()[\],;:\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(email)) {
      throw usage(`--email ${shown(flags.email.slice(0, 80))} is not an email address`, 'e.g. --email ana@example.com');
    }
    return { role, type, value: email };
  }
  if (type === 'domain') {
    if (flags.email !== undefined) throw usage('--email is for --type user or group; a domain is given with --domain <name>');
    const domain = flags.domain?.trim();
    if (!domain || domain.length > 253 || !/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(domain)) {
      throw usage(
        domain === undefined ? '--type domain needs --domain <name>' : `--domain ${shown(String(flags.domain).slice(0, 80))} is not a domain name`,
        'e.g. --type domain --domain example.com',
      );
    }
    return { role, type, value: domain.toLowerCase() };
  }
  if (flags.email !== undefined || flags.domain !== undefined)
    throw usage('--type anyone takes neither --email nor --domain: everyone with the link gets the role');
  if (role === 'owner' || role === 'writer') throw usage(`--type anyone cannot be given the role ${role}`, 'anyone with the link may be a reader or commenter');
  return { role, type, value: undefined };
}

/** `--listen host:port` (IPv6 in brackets): where the notification receiver listens. */
export function checkListen(value: string): { host: string; port: number } {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(value.trim());
  const port = Number(m?.[2]);
  if (!m || port > 65535) throw usage(`--listen ${shown(value.slice(0, 80))} is not host:port`, 'e.g. --listen 127.0.0.1:8765 (port 0: any free port)');
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** `--address <url>`: what the service is told to POST notifications to (https, or http on loopback). */
export function checkNotifyAddress(value: string): string {
  return parseServiceUrl(value, { name: '--address', query: true, hint: 'e.g. --address https://hooks.example.com/storage (forwarded to --listen)' }).href;
}

/** A local file `put` is to upload: it must exist and be a regular file (a folder, a device, a FIFO are refused). */
export async function checkUploadSource(file: string): Promise<{ path: string; size: number }> {
  if (file.trim() === '') throw usage('the file to upload is empty');
  const path = resolve(file);
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(
      `the file to upload ${shown(path)} ${error.code === 'ENOENT' ? missingPathText(path) : `cannot be read (${error.code ?? error.message})`}`,
      { hint: (error.code === 'ENOENT' ? missingPathHint(path) : undefined) ?? 'give the path of a regular file' },
    );
  });
  if (info.isDirectory())
    throw usage(`${shown(path)} is a folder: put uploads one file`, 'upload its files one by one, or pack it first (tar czf folder.tgz folder)');
  if (!info.isFile())
    throw usage(
      `${shown(path)} is not a regular file (a device, FIFO or socket)`,
      'give the path of a regular file: its size must be known before the upload starts',
    );
  return { path, size: info.size };
}

/** What can tell that a file changed: size, modification time and inode. */
export interface FileStamp {
  size: number;
  mtimeMs: number;
  ino: number;
}

export async function stampOf(path: string): Promise<FileStamp | undefined> {
  const info = await stat(path).catch(() => undefined);
  return info ? { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino } : undefined;
}

/** How `now` differs from `then`, in words; undefined when it does not. */
export function stampChange(then: FileStamp, now: FileStamp | undefined): string | undefined {
  if (!now) return 'it was removed';
  if (now.ino !== then.ino) return 'it was replaced by another file';
  if (now.size !== then.size) return `its size went from ${then.size} to ${now.size} bytes`;
  if (now.mtimeMs !== then.mtimeMs) return `it was modified at ${new Date(now.mtimeMs).toISOString()}`;
  return undefined;
}

/**
 * The folder upload session files live in: $XDG_STATE_HOME/gantry/storage-uploads (when absolute, as the XDG spec
 * asks), else ~/.local/state/gantry/storage-uploads. Made 0700: a session URI lets anyone holding it send bytes.
 */
export function uploadStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(env.HOME || homedir(), '.local', 'state');
  return join(state, 'gantry', 'storage-uploads');
}

/** The session file of an upload of `path` to the service at `baseUrl`: one per file and service. */
export function sessionFileFor(baseUrl: string, path: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = createHash('sha256').update(`${baseUrl}\0${path}`).digest('hex').slice(0, 16);
  const name =
    basename(path)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 80) || 'file';
  return join(uploadStateDir(env), `${name}.${key}.json`);
}

export async function ensureUploadStateDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = await ensureFolder(uploadStateDir(env), 'the folder of upload sessions');
  await chmod(dir, 0o700).catch(() => undefined);
  return dir;
}

/**
 * A title as a local file name: path separators, and every character `terminalText` would escape (controls, bidi and
 * invisible format characters: a name `invoice\u202efdp.exe` that `ls` would show as `invoiceexe.pdf`), become `_`;
 * `.`/`..`/empty become the id.
 */
export function localNameFor(title: string | undefined, id: string): string {
  const name = [...(title ?? '')]
    .map((char) => (char === '/' || char === '\\' || terminalText(char) !== char ? '_' : char))
    .join('')
    .trim()
    .slice(0, 200);
  return name === '' || name === '.' || name === '..' ? id : name;
}

/** The usual file extension of an export type, for the default output name. */
export const EXPORT_EXTENSIONS: Record<string, string> = {
  'text/plain': '.txt',
  'text/html': '.html',
  'text/markdown': '.md',
  'text/csv': '.csv',
  'text/tab-separated-values': '.tsv',
  'application/pdf': '.pdf',
  'application/rtf': '.rtf',
  'application/zip': '.zip',
  'application/epub+zip': '.epub',
  'application/vnd.oasis.opendocument.text': '.odt',
  'application/vnd.oasis.opendocument.spreadsheet': '.ods',
  'application/vnd.oasis.opendocument.presentation': '.odp',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': '.docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': '.xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': '.pptx',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/svg+xml': '.svg',
};

/** Bytes for people: 1.5 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
