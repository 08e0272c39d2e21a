// The metadata actions of `gantry storage`: ls, mkdir, mv, trash, untrash, rm, share, revisions, about. Each checks
// what it was given before opening the client (exit 2, nothing sent), then calls one or two storage methods.
import { terminalText } from '../../../terminal-text.js';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { CheckFailedError, shown, UsageError } from '../../../errors.js';
import type { File, Permission, Revision, StorageClient } from '../../../storage/index.js';
import { usage, type CliContext } from '../../context.js';
import type { StorageFlags } from './client.js';
import { checkCount, checkId, checkShare, checkTitle, formatBytes } from './input.js';
import { interruption, jsonLine, shortDate, StreamTable, withHint, withStorage } from './run.js';

interface LsFlags extends StorageFlags {
  query?: string;
  all?: boolean;
  max?: string;
  trashed?: boolean;
}

/** The default number of files `ls` lists without --all or --max: Drive's page size. */
export const LS_DEFAULT_MAX = 100;

/** lib/storage is loaded once a command talks to the service, so that bad input is refused without loading it. */
const storage = () => import('../../../storage/index.js');

const fileColumns = (FOLDER_MIME: string) => [
  { header: 'id', value: (f: File) => f.id },
  { header: 'title', value: (f: File) => (f.mimeType === FOLDER_MIME ? `${f.title ?? ''}/` : f.title) },
  { header: 'mimeType', value: (f: File) => f.mimeType },
  { header: 'size', value: (f: File) => f.fileSize, align: 'right' as const },
  { header: 'modified', value: (f: File) => shortDate(f.modifiedDate) },
];

/** `ls`'s query: the folder's children unless a query or --trashed says where to look, never trashed unless asked. */
export function listQuery(folder: string, given: { folder: boolean; query?: string; trashed?: boolean }): string {
  const parts: string[] = [];
  // The user's query first, so that a position the service names in an error is near the one in what was typed; only
  // an `or` in it (outside quotes) needs parentheses to stay whole.
  if (given.query !== undefined) parts.push(hasOr(given.query) ? `(${given.query})` : given.query);
  if (given.folder || (given.query === undefined && !given.trashed)) parts.push(`'${folder}' in parents`);
  // A query that says `trashed` itself decides what of the trash it lists.
  if (given.query !== undefined && namesTrashed(given.query)) {
    if (given.trashed)
      throw usage('--trashed and a --query that names trashed both say what of the trash to list', 'keep one: --trashed, or trashed = true in the query');
  } else parts.push(given.trashed ? 'trashed = true' : 'trashed = false');
  return parts.join(' and ');
}

const unquoted = (query: string) => query.replace(/'(?:[^'\\]|\\.)*'/g, "''");

/** Whether a query has an `or` outside its quoted strings. */
function hasOr(query: string): boolean {
  return /(^|\s|\))or(\s|\(|$)/i.test(unquoted(query));
}

/**
 * What leaves a query unfinished — an open quote or parenthesis, an `and`/`or`/`not` with no term after it — or
 * undefined. Joined with the listing's own filters such a query would be judged at a place the user did not write.
 */
function unfinishedQuery(query: string): string | undefined {
  if (unquoted(query).replace(/''/g, '').includes("'")) return 'has a quote that is not closed';
  const bare = unquoted(query);
  let depth = 0;
  for (const char of bare) {
    depth += char === '(' ? 1 : char === ')' ? -1 : 0;
    if (depth < 0) return 'closes a parenthesis it did not open';
  }
  if (depth > 0) return `leaves ${depth === 1 ? 'a parenthesis' : `${depth} parentheses`} open`;
  const last = /(?:^|[\s(])(and|or|not)\s*$/i.exec(bare);
  if (last) return `ends with '${last[1]}': a term must follow it`;
  const first = /^\s*(and|or)(?:[\s(]|$)/i.exec(bare);
  if (first) return `begins with '${first[1]}': a term must come before it`;
  return undefined;
}

function namesTrashed(query: string): boolean {
  return /(^|[\s(])trashed\s*(=|!=)/i.test(unquoted(query));
}

export async function lsAction(folderArg: string | undefined, flags: LsFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  const { out } = context;
  const folder = folderArg === undefined ? 'root' : checkId(folderArg, 'the folder id');
  if (flags.all && flags.max !== undefined) throw usage('--all and --max contradict each other', 'give --all for every file, or --max N for at most N');
  const max = flags.all ? Number.POSITIVE_INFINITY : flags.max !== undefined ? checkCount(flags.max, '--max') : LS_DEFAULT_MAX;
  if (flags.query !== undefined) {
    if (flags.query.trim() === '') throw usage('--query is empty', 'e.g. --query "title contains \'report\'"');
    if (shown(flags.query) !== flags.query) throw usage(`--query ${shown(flags.query.slice(0, 80))} holds control characters`);
    const unfinished = unfinishedQuery(flags.query);
    if (unfinished)
      throw usage(
        `--query ${JSON.stringify(flags.query.slice(0, 200))} ${unfinished}`,
        "e.g. --query \"title contains 'report' and modifiedDate > '2026-01-01'\"",
      );
  }
  const q = listQuery(folder, {
    folder: folderArg !== undefined,
    ...(flags.query !== undefined ? { query: flags.query } : {}),
    ...(flags.trashed ? { trashed: true } : {}),
  });
  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME } = await storage();
    const stop = interruption({ reader: true });
    try {
      if (folderArg !== undefined && folder !== 'root') {
        const found = await client.files.get({ fileId: folder, fields: 'id,title,mimeType', signal: stop.signal });
        if (found.mimeType !== FOLDER_MIME) {
          throw new CheckFailedError(`${folder} is not a folder: it is ${found.title ?? 'a file'} (${found.mimeType ?? 'no type'})`, {
            code: 'STORAGE_NOT_A_FOLDER',
            hint: `download it with: gantry storage get ${folder}`,
          });
        }
      }
      const pageSize = Math.min(1000, Number.isFinite(max) ? max + 1 : 1000);
      const items = client.files.list.all({
        q,
        orderBy: 'folder,title',
        maxResults: pageSize,
        ...(json ? {} : { fields: 'items(id,title,mimeType,fileSize,modifiedDate)' }),
        signal: stop.signal,
      });
      const table = new StreamTable(out, fileColumns(FOLDER_MIME));
      let batch: File[] = [];
      let count = 0;
      let more = false;
      for await (const file of items) {
        if (count >= max) {
          more = true;
          break;
        }
        count += 1;
        if (json) jsonLine(out, file);
        else {
          batch.push(file);
          if (batch.length >= LS_DEFAULT_MAX) {
            table.write(batch);
            batch = [];
          }
        }
        if (stop.reason()) break;
      }
      if (!json) {
        table.write(batch);
        if (count === 0 && !stop.reason())
          out.note(flags.trashed ? 'The trash is empty.' : folderArg === undefined && flags.query === undefined ? 'No files in the root folder.' : 'No files.');
      }
      if (more) out.note(`More files than the ${max} listed: --max N lists more, --all every one.`);
      if (stop.reason()) process.exitCode = stop.exitCode();
    } catch (error) {
      // The service judges the whole query sent, which is more than --query: show it, so a position it names can be found.
      if (
        !stop.reason() &&
        flags.query !== undefined &&
        q !== flags.query &&
        (error as { status?: unknown; location?: unknown }).status === 400 &&
        (error as { location?: unknown }).location === 'q'
      ) {
        throw withHint(error, `check the --query syntax (docs/storage.md); it was sent, your query first and the listing's own filters after it, as: ${q}`);
      }
      // The reader took what it wanted (exit 0); Ctrl-C ends the listing with 130 (SIGTERM 143), without a message.
      if (!stop.reason()) throw error;
      process.exitCode = stop.exitCode();
    } finally {
      stop.dispose();
    }
  });
}

export async function mkdirAction(title: string, flags: StorageFlags & { parent?: string }, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  checkTitle(title, 'the folder title');
  const parent = flags.parent !== undefined ? checkId(flags.parent, '--parent') : undefined;
  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME } = await storage();
    const folder = await client.files.insert({ requestBody: { title, mimeType: FOLDER_MIME, ...(parent ? { parents: [{ id: parent }] } : {}) } });
    if (json) context.out.json(folder);
    else context.out.line(`Created folder ${terminalText(folder.title)} (${terminalText(folder.id)})${parent ? ` in ${parent}` : ''}`);
  });
}

export async function mvAction(id: string, flags: StorageFlags & { to: string }, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  checkId(id);
  const to = checkId(flags.to, '--to');
  if (id === to) throw usage(`mv ${id} --to ${to}: a file or folder cannot be moved into itself`, 'give --to another folder (gantry storage ls lists them)');
  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME } = await storage();
    const target = await client.files.get({ fileId: to, fields: 'id,title,mimeType' });
    if (target.mimeType !== FOLDER_MIME)
      throw new CheckFailedError(`--to ${to} is not a folder: it is ${target.title ?? 'a file'} (${target.mimeType ?? 'no type'})`, {
        code: 'STORAGE_NOT_A_FOLDER',
        hint: 'give a folder id (gantry storage mkdir makes one)',
      });
    const current = await client.files.get({ fileId: id, fields: 'id,title,parents(id)' });
    // `root` and the root folder's id name the same folder: the service's ids decide.
    if (current.id === target.id)
      throw new CheckFailedError(`${current.title} (${current.id}) cannot be moved into itself`, {
        code: 'STORAGE_MOVE_INTO_ITSELF',
        hint: 'give --to another folder',
      });
    const others = (current.parents ?? []).map((p) => p.id).filter((p): p is string => !!p && p !== target.id);
    const moved = await client.files
      .patch({ fileId: id, addParents: target.id!, ...(others.length > 0 ? { removeParents: others.join(',') } : {}) })
      .catch((error: unknown) => {
        // The service refuses a parent that would make a cycle (400 badRequest): --to is inside the folder moved.
        const refused = error as { status?: unknown; reason?: unknown; location?: unknown };
        if (refused.status === 400 && refused.reason === 'badRequest' && refused.location === 'addParents') {
          throw withHint(
            error,
            `${target.title} (${target.id}) is inside ${current.title} (${current.id}): a folder cannot be moved into one of its own subfolders`,
          );
        }
        throw error;
      });
    if (json) context.out.json(moved);
    else context.out.line(`Moved ${terminalText(moved.title)} (${terminalText(moved.id)}) to ${terminalText(target.title)} (${terminalText(target.id)})`);
  });
}

export async function trashAction(verb: 'trash' | 'untrash', id: string, flags: StorageFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  checkId(id);
  await withStorage(flags, context, async ({ client }) => {
    if (verb === 'untrash') {
      // The service answers an untrash of a file outside the trash as if it restored it: say what is true.
      const before = await client.files.get({ fileId: id });
      if (before.labels?.trashed !== true) {
        if (json) context.out.json(before);
        else context.out.line(`${terminalText(before.title)} (${terminalText(before.id)}) is not in the trash: nothing to restore`);
        return;
      }
    }
    const file = verb === 'trash' ? await client.files.trash({ fileId: id }) : await client.files.untrash({ fileId: id });
    if (json) context.out.json(file);
    // A file inside a trashed folder stays in the trash after its own untrash: Drive v2 answers labels.trashed true
    // with explicitlyTrashed false. Saying "Restored" then would be false.
    if (verb === 'untrash' && file.labels?.trashed === true) {
      const above = await trashedAncestor(client, file);
      throw new CheckFailedError(
        `${file.title} (${file.id}) is still in the trash because ${above ? `the folder ${above.title} (${above.id})` : 'a folder'} above it is`,
        {
          code: 'STORAGE_STILL_TRASHED',
          hint: above
            ? `gantry storage untrash ${above.id} restores that folder with everything in it`
            : 'untrash the trashed folder it is in (gantry storage ls --trashed lists the trash)',
        },
      );
    }
    if (!json)
      context.out.line(
        verb === 'trash'
          ? `Trashed ${terminalText(file.title)} (${terminalText(file.id)}); gantry storage untrash ${terminalText(file.id)} brings it back`
          : `Restored ${terminalText(file.title)} (${terminalText(file.id)}) from the trash`,
      );
  });
}

/** The folder above `file` that was trashed itself (explicitlyTrashed), looked for parent by parent; undefined if none. */
async function trashedAncestor(client: StorageClient, file: File): Promise<File | undefined> {
  const seen = new Set<string>([file.id ?? '']);
  let queue = (file.parents ?? []).map((p) => p.id).filter((p): p is string => !!p);
  // A bounded walk: folders are rarely deep, and a damaged tree must not make it endless.
  for (let asked = 0; queue.length > 0 && asked < 50; asked += 1) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const folder = await client.files.get({ fileId: id, fields: 'id,title,labels(trashed),explicitlyTrashed,parents(id)' }).catch(() => undefined);
    if (!folder?.labels?.trashed) continue;
    if (folder.explicitlyTrashed) return folder;
    queue = [...queue, ...(folder.parents ?? []).map((p) => p.id).filter((p): p is string => !!p)];
  }
  return undefined;
}

/** Asks on the terminal; true only for y or yes. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

export async function rmAction(id: string, flags: StorageFlags & { yes?: boolean }, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  checkId(id);
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  if (!flags.yes && !interactive) {
    throw new UsageError(`rm deletes ${id} permanently, without the trash: confirm with --yes`, {
      code: 'STORAGE_CONFIRM',
      hint: `gantry storage rm ${id} --yes, or gantry storage trash ${id} to keep it restorable`,
    });
  }
  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME } = await storage();
    // Asked first, so that both the question and the result name what is deleted (a 404 ends it here, exit 1).
    const file = await client.files.get({ fileId: id, fields: 'id,title,mimeType' });
    const folder = file.mimeType === FOLDER_MIME;
    if (!flags.yes) {
      const what = `${folder ? 'the folder ' : ''}${file.title} (${file.id})${folder ? ' and everything in it' : ''}`;
      if (!(await confirm(`Delete ${what} permanently? It skips the trash and cannot be undone. [y/N] `))) {
        context.out.note('Nothing deleted.');
        process.exitCode = 1;
        return;
      }
    }
    await client.files.delete({ fileId: id });
    if (json) context.out.json({ id, title: file.title, deleted: true });
    else
      context.out.line(
        `Deleted ${folder ? 'the folder ' : ''}${terminalText(file.title)} (${terminalText(file.id)})${folder ? ' and everything in it' : ''} permanently`,
      );
  });
}

interface ShareFlags extends StorageFlags {
  email?: string;
  domain?: string;
  role?: string;
  type?: string;
  notify: boolean;
  message?: string;
}

export async function shareAction(id: string, flags: ShareFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  checkId(id);
  const target = checkShare(flags);
  if (flags.message !== undefined && !flags.notify) throw usage('--message goes with the notification e-mail; --no-notify sends none');
  if (flags.message !== undefined && (flags.message.length > 2000 || shown(flags.message.replace(/\n/g, ' ')) !== flags.message.replace(/\n/g, ' ')))
    throw usage('--message must be at most 2000 characters of text (line breaks allowed, no other control characters)');
  // Drive v2 has no commenter role of its own: a commenter is a reader with the additional role commenter.
  const body: Permission =
    target.role === 'commenter' ? { role: 'reader', additionalRoles: ['commenter'], type: target.type } : { role: target.role, type: target.type };
  if (target.value !== undefined) body.value = target.value;
  await withStorage(flags, context, async ({ client }) => {
    const permission = await client.permissions.insert({
      fileId: id,
      requestBody: body,
      ...(target.type === 'user' || target.type === 'group' ? { sendNotificationEmails: flags.notify } : {}),
      ...(flags.message !== undefined ? { emailMessage: flags.message } : {}),
    });
    if (json) context.out.json(permission);
    else {
      const whom = target.type === 'anyone' ? 'anyone with the link' : `${target.type} ${permission.emailAddress ?? permission.domain ?? target.value}`;
      const role = [permission.role, ...(permission.additionalRoles ?? [])].join('+');
      context.out.line(`Shared ${id} with ${terminalText(whom)} as ${terminalText(role)} (permission ${terminalText(permission.id)})`);
    }
  });
}

export async function revisionsAction(id: string, flags: StorageFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  checkId(id);
  await withStorage(flags, context, async ({ client }) => {
    const { FOLDER_MIME } = await storage();
    const revisions: Revision[] = [];
    for await (const revision of client.revisions.list.all({ fileId: id })) revisions.push(revision);
    if (json) {
      context.out.json(revisions);
      return;
    }
    if (revisions.length === 0) {
      // Said from what the file is, not guessed: a folder keeps none, a file of metadata only has had no content yet.
      const file = await client.files.get({ fileId: id, fields: 'mimeType,fileSize,md5Checksum' });
      const why =
        file.mimeType === FOLDER_MIME
          ? 'a folder keeps none'
          : file.fileSize === undefined && file.md5Checksum === undefined
            ? 'it holds metadata only: a revision is kept for each upload of content'
            : undefined;
      context.out.note(`${id} has no revisions${why ? ` (${why})` : ''}.`);
      return;
    }
    context.out.table(revisions, [
      { header: 'id', value: (r) => r.id },
      { header: 'modified', value: (r) => shortDate(r.modifiedDate) },
      { header: 'size', value: (r) => r.fileSize, align: 'right' },
      { header: 'md5', value: (r) => r.md5Checksum },
      { header: 'by', value: (r) => r.lastModifyingUserName ?? r.lastModifyingUser?.emailAddress },
      { header: 'pinned', value: (r) => (r.pinned ? 'yes' : '') },
    ]);
  });
}

export async function aboutAction(flags: StorageFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  await withStorage(flags, context, async ({ client, tokenFrom }) => {
    const about = await client.about.get();
    if (json) {
      context.out.json(about);
      return;
    }
    const bytes = (value: string | undefined) =>
      value !== undefined && /^\d+$/.test(value) ? `${formatBytes(Number(value))} (${value} bytes)` : (value ?? 'unknown');
    const rows: Array<[string, string]> = [
      ['service', client.baseUrl],
      ['user', `${about.user?.displayName ?? about.name ?? 'unknown'}${about.user?.emailAddress ? ` <${about.user.emailAddress}>` : ''}`],
      ['token', `from ${tokenFrom}`],
      ['root folder', about.rootFolderId ?? 'unknown'],
      [
        'quota',
        about.quotaBytesTotal === undefined || (about.quotaBytesTotal === '0' && about.quotaType === 'UNLIMITED')
          ? `${bytes(about.quotaBytesUsed)} used, unlimited`
          : `${bytes(about.quotaBytesUsed)} used of ${bytes(about.quotaBytesTotal)}`,
      ],
      ['in the trash', bytes(about.quotaBytesUsedInTrash)],
      ['largest change id', about.largestChangeId ?? 'unknown'],
      ...(about.maxUploadSizes ?? []).map((m): [string, string] => [`max upload (${m.type ?? '?'})`, bytes(m.size)]),
    ];
    context.out.table(rows, [
      { header: 'what', value: (r) => r[0] },
      { header: 'value', value: (r) => r[1] },
    ]);
  });
}
