// The storage server's state, persisted to a folder: `state.json` (every file's metadata, revisions, permissions,
// the change log and the upload sessions) written to a temp name and renamed, and content as files under `content/`
// (one per revision) and `uploads/` (one per resumable session, appended to as chunks arrive).
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../lib/atomic-write.js';
import { UsageError } from '../../lib/errors.js';
import { parseJsonQuietly } from '../../lib/json-syntax.js';

export const FOLDER_MIME = 'application/vnd.google-apps.folder';

export interface Labels {
  starred: boolean;
  hidden: boolean;
  trashed: boolean;
  restricted: boolean;
  viewed: boolean;
}

export interface FileRecord {
  id: string;
  title: string;
  mimeType: string;
  description?: string;
  parents: string[];
  labels: Labels;
  /** Trashed itself (not only through a trashed folder above it). */
  explicitlyTrashed: boolean;
  createdDate: string;
  modifiedDate: string;
  lastViewedByMeDate?: string;
  /** Bumped on every change; the etag derives from it. */
  version: number;
  headRevisionId?: string;
  md5Checksum?: string;
  fileSize?: number;
  originalFilename?: string;
  properties: { key: string; value: string; visibility: 'PUBLIC' | 'PRIVATE' }[];
  /** Insertion order, the list's default order. */
  seq: number;
}

export interface RevisionRecord {
  id: string;
  mimeType: string;
  md5Checksum: string;
  fileSize: number;
  modifiedDate: string;
  pinned: boolean;
  originalFilename?: string;
}

export interface PermissionRecord {
  id: string;
  type: 'user' | 'group' | 'domain' | 'anyone';
  role: 'owner' | 'organizer' | 'fileOrganizer' | 'writer' | 'commenter' | 'reader';
  emailAddress?: string;
  domain?: string;
  withLink?: boolean;
  /** Drive v2's extra roles: `commenter` beside `reader`. */
  additionalRoles?: string[];
}

export interface ChangeRecord {
  id: number;
  fileId: string;
  deleted: boolean;
  modificationDate: string;
}

export interface SessionRecord {
  id: string;
  /** Set for an update (PUT /upload/storage/v2/files/{fileId}). */
  fileId?: string;
  metadata: Record<string, unknown>;
  contentType: string;
  /** Unknown (`*`) until a chunk states it or the header gave it. */
  total?: number;
  received: number;
  createdAt: number;
  expiresAt: number;
  query: Record<string, string>;
  /** Set once the last byte arrived: a later status query answers this file. */
  completedFileId?: string;
}

export interface ReplyRecord {
  replyId: string;
  content: string;
  verb?: 'resolve' | 'reopen';
  createdDate: string;
  modifiedDate: string;
  deleted: boolean;
}

export interface CommentRecord {
  commentId: string;
  content: string;
  anchor?: string;
  context?: { type: string; value: string };
  status: 'open' | 'resolved';
  createdDate: string;
  modifiedDate: string;
  deleted: boolean;
  replies: ReplyRecord[];
}

export interface DriveRecord {
  id: string;
  name: string;
  hidden: boolean;
  createdDate: string;
  requestId: string;
  colorRgb?: string;
  themeId?: string;
}

export interface LabelRecord {
  id: string;
  revisionId: string;
  fields: Record<string, unknown>;
}

export interface ChannelRecord {
  id: string;
  resourceId: string;
  resourceUri: string;
  /** Absent: the change log; else the file watched. */
  fileId?: string;
  address: string;
  token?: string;
  expiration?: number;
  messageNumber: number;
}

export interface StateData {
  rootId: string;
  seq: number;
  files: Record<string, FileRecord>;
  revisions: Record<string, RevisionRecord[]>;
  permissions: Record<string, PermissionRecord[]>;
  changes: ChangeRecord[];
  largestChangeId: number;
  sessions: Record<string, SessionRecord>;
  comments: Record<string, CommentRecord[]>;
  drives: Record<string, DriveRecord>;
  labels: Record<string, LabelRecord[]>;
  channels: Record<string, ChannelRecord>;
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A Drive-looking id: 33 characters of [A-Za-z0-9_-] starting with `1`. */
/** A file as it starts: viewed and nothing else (not starred, hidden, trashed or restricted), version 1, no properties. */
export function newFileRecord(fields: Pick<FileRecord, 'id' | 'title' | 'mimeType' | 'parents' | 'seq'>, at: string): FileRecord {
  const { id, title, mimeType, parents, seq } = fields;
  return {
    id,
    title,
    mimeType,
    parents,
    labels: { starred: false, hidden: false, trashed: false, restricted: false, viewed: true },
    explicitlyTrashed: false,
    createdDate: at,
    modifiedDate: at,
    version: 1,
    properties: [],
    seq,
  };
}

export function newId(length = 33): string {
  const bytes = randomBytes(length);
  let id = '1';
  for (let i = 1; i < length; i++) id += ID_ALPHABET[bytes[i]! & 63];
  return id;
}

export class Store {
  data: StateData;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly dir: string,
    data: StateData,
  ) {
    this.data = data;
  }

  static async open(dir: string, now: () => string): Promise<Store> {
    await mkdir(path.join(dir, 'content'), { recursive: true });
    await mkdir(path.join(dir, 'uploads'), { recursive: true });
    let data: StateData | undefined;
    const stateFile = path.join(dir, 'state.json');
    let text: string | undefined;
    try {
      text = await readFile(stateFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== undefined) {
      // A damaged state is bad input named as such (exit 2), never a stack — and never quoted.
      const parsed = parseJsonQuietly(text);
      const hint = 'move state.json away to start afresh, or use another folder';
      if (!parsed.ok) throw new UsageError(`${stateFile} is not JSON (${parsed.reason}): the storage server's state is damaged`, { hint });
      const value = parsed.value as Partial<StateData> | null;
      if (
        !value ||
        typeof value !== 'object' ||
        typeof value.rootId !== 'string' ||
        !value.files ||
        typeof value.files !== 'object' ||
        !value.files[value.rootId]
      ) {
        throw new UsageError(`${stateFile} is not a storage server's state (no root folder)`, { hint });
      }
      data = value as StateData;
    }
    if (!data) {
      const rootId = '0A' + newId(17).slice(1);
      const at = now();
      data = {
        rootId,
        seq: 1,
        files: {},
        revisions: {},
        permissions: {},
        changes: [],
        largestChangeId: 0,
        sessions: {},
        comments: {},
        drives: {},
        labels: {},
        channels: {},
      };
      data.files[rootId] = newFileRecord({ id: rootId, title: 'My Drive', mimeType: FOLDER_MIME, parents: [], seq: 0 }, at);
    }
    data.comments ??= {};
    data.drives ??= {};
    data.labels ??= {};
    data.channels ??= {};
    // Leftovers of a process that died mid-request: temp files of simple uploads and copies, expired sessions.
    const nowMs = Date.now();
    for (const [id, session] of Object.entries(data.sessions)) if (session.expiresAt <= nowMs) delete data.sessions[id];
    for (const name of await readdir(path.join(dir, 'uploads'))) if (!data.sessions[name]) await rm(path.join(dir, 'uploads', name), { force: true });
    for (const name of await readdir(dir)) if (/^\.state\..*\.tmp$/.test(name)) await rm(path.join(dir, name), { force: true });
    const store = new Store(dir, data);
    await store.save();
    return store;
  }

  contentPath(revisionId: string): string {
    return path.join(this.dir, 'content', revisionId);
  }

  uploadPath(sessionId: string): string {
    return path.join(this.dir, 'uploads', sessionId);
  }

  /** Writes state.json to a temp name and renames it over the old one; writes never overlap. */
  save(): Promise<void> {
    const text = JSON.stringify(this.data);
    const next = this.writing.then(async () => {
      await writeFileAtomic(path.join(this.dir, 'state.json'), text);
    });
    this.writing = next.catch(() => {});
    return next;
  }

  async removeContent(revisionId: string): Promise<void> {
    await rm(this.contentPath(revisionId), { force: true });
  }
}
