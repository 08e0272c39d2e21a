// The storage model over the store: ids (the `root` alias), trash as a label cascading to descendants, permanent
// deletion, the change log, etags, Drive v2's `storage#file` representation and metadata bodies checked at the boundary.
import { createHash } from 'node:crypto';
import { badRequest, notFound, StorageFailure } from './http.js';
import { FOLDER_MIME, newFileRecord, newId, type FileRecord, type Store } from './store.js';

export class Model {
  /** Called for every change logged (the push channels listen). */
  onChange?: (fileId: string, deleted: boolean) => void;

  constructor(
    readonly store: Store,
    readonly now: () => string = () => new Date().toISOString(),
  ) {}

  get data() {
    return this.store.data;
  }

  resolveId(id: string): string {
    return id === 'root' ? this.data.rootId : id;
  }

  file(id: string, location = 'fileId'): FileRecord {
    const file = this.data.files[this.resolveId(id)];
    if (!file) throw notFound(id, 'File', location);
    return file;
  }

  children(id: string): FileRecord[] {
    return Object.values(this.data.files).filter((f) => f.parents.includes(id));
  }

  /**
   * The folder `id` as a new parent of `file`: it must exist and be a folder, and must be neither `file` nor below it —
   * a cycle would cut both from the root (Drive answers 400 badRequest for "a parent that would create a cycle in
   * the directory graph"). The root folder takes no parent. `location` names what the request gave the id in.
   */
  parentFor(file: FileRecord | undefined, id: string, location: string): FileRecord {
    const parent = this.file(id, location);
    if (parent.mimeType !== FOLDER_MIME) throw badRequest(`The parent ${id} is not a folder`, location);
    if (file === undefined) return parent;
    if (file.id === this.data.rootId)
      throw new StorageFailure(403, 'cannotModifyRootFolder', 'The root folder cannot be placed inside another folder', location);
    if (parent.id === file.id || this.descendants(file.id).some((d) => d.id === parent.id)) {
      throw new StorageFailure(400, 'badRequest', 'A folder cannot be placed inside itself or one of its descendants', location);
    }
    return parent;
  }

  /** Every file below `id` (not `id` itself), each once. */
  descendants(id: string): FileRecord[] {
    const seen = new Set<string>([id]);
    const out: FileRecord[] = [];
    const queue = [id];
    while (queue.length > 0) {
      for (const child of this.children(queue.shift()!)) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        out.push(child);
        queue.push(child.id);
      }
    }
    return out;
  }

  etag(file: FileRecord): string {
    return `"${createHash('sha1').update(`${file.id}:${file.version}`).digest('base64url').slice(0, 27)}"`;
  }

  /** Marks a change: bumps the version and modifiedDate (unless `touchModified` is false) and logs it. */
  changed(file: FileRecord, touchModified = true): void {
    file.version++;
    if (touchModified) file.modifiedDate = this.now();
    this.logChange(file.id, false);
  }

  logChange(fileId: string, deleted: boolean): void {
    const id = ++this.data.largestChangeId;
    this.data.changes = this.data.changes.filter((c) => c.fileId !== fileId);
    this.data.changes.push({ id, fileId, deleted, modificationDate: this.now() });
    this.onChange?.(fileId, deleted);
  }

  trash(file: FileRecord): void {
    if (file.id === this.data.rootId) throw new StorageFailure(403, 'cannotModifyRootFolder', 'The root folder cannot be trashed', 'fileId');
    file.explicitlyTrashed = true;
    file.labels.trashed = true;
    this.changed(file, false);
    for (const d of this.descendants(file.id)) {
      if (!d.labels.trashed) {
        d.labels.trashed = true;
        this.changed(d, false);
      }
    }
  }

  untrash(file: FileRecord): void {
    file.explicitlyTrashed = false;
    file.labels.trashed = this.parentTrashed(file);
    this.changed(file, false);
    if (file.labels.trashed) return;
    const walk = (id: string) => {
      for (const child of this.children(id)) {
        if (child.explicitlyTrashed || !child.labels.trashed) continue;
        child.labels.trashed = false;
        this.changed(child, false);
        walk(child.id);
      }
    };
    walk(file.id);
  }

  private parentTrashed(file: FileRecord): boolean {
    return file.parents.length > 0 && file.parents.every((p) => this.data.files[p]?.labels.trashed === true);
  }

  /** Deletes the file and every descendant whose parents are all deleted with it; returns content to remove. */
  remove(file: FileRecord): string[] {
    if (file.id === this.data.rootId) throw new StorageFailure(403, 'cannotModifyRootFolder', 'The root folder cannot be deleted', 'fileId');
    const doomed = new Set<string>([file.id]);
    for (const d of this.descendants(file.id)) if (d.parents.every((p) => doomed.has(p))) doomed.add(d.id);
    const blobs: string[] = [];
    for (const id of doomed) {
      blobs.push(...(this.data.revisions[id] ?? []).map((r) => r.id));
      delete this.data.files[id];
      delete this.data.revisions[id];
      delete this.data.permissions[id];
      delete this.data.comments[id];
      delete this.data.labels[id];
      this.logChange(id, true);
    }
    for (const f of Object.values(this.data.files)) {
      const kept = f.parents.filter((p) => !doomed.has(p));
      if (kept.length !== f.parents.length) {
        f.parents = kept;
        this.changed(f, false);
      }
    }
    return blobs;
  }

  /** A new file record from a metadata body (checked), not yet stored. */
  create(metadata: Record<string, unknown>, defaults: { mimeType: string; title?: string }, id?: string): FileRecord {
    const at = this.now();
    const file = newFileRecord(
      { id: id ?? newId(), title: defaults.title ?? 'Untitled', mimeType: defaults.mimeType, parents: [this.data.rootId], seq: this.data.seq++ },
      at,
    );
    if (id !== undefined) {
      if (!/^[A-Za-z0-9_-]{10,}$/.test(id)) throw badRequest('The provided file ID is not usable.', 'id', 'invalid');
      if (this.data.files[id]) throw new StorageFailure(409, 'duplicate', 'A file already exists with the provided ID.', 'id');
    }
    this.applyMetadata(file, metadata, true);
    return file;
  }

  /** Applies the writable fields of a `storage#file` body; read-only fields are ignored, as Drive does. */
  applyMetadata(file: FileRecord, body: Record<string, unknown>, creating = false): void {
    const str = (key: string): string | undefined => {
      const v = body[key];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== 'string') throw badRequest(`Invalid value for ${key}`, key);
      return v;
    };
    // The parents are checked before anything is changed: a refused request leaves the file as it was.
    let parents: string[] | undefined;
    if (body.parents !== undefined) {
      if (!Array.isArray(body.parents)) throw badRequest('Invalid value for parents', 'parents');
      parents = [
        ...new Set(
          body.parents.map((p: unknown) => {
            const id = typeof p === 'string' ? p : (p as { id?: unknown } | null)?.id;
            if (typeof id !== 'string') throw badRequest('Invalid value for parents', 'parents');
            return this.parentFor(creating ? undefined : file, id, 'parents').id;
          }),
        ),
      ];
    }
    const title = str('title');
    const mimeType = str('mimeType');
    if (mimeType !== undefined && !creating && (mimeType === FOLDER_MIME) !== (file.mimeType === FOLDER_MIME))
      throw badRequest('A file cannot become a folder or a folder a file', 'mimeType');
    const description = str('description');
    const originalFilename = str('originalFilename');
    if (title !== undefined) file.title = title;
    if (mimeType !== undefined) file.mimeType = mimeType;
    if (description !== undefined) file.description = description;
    if (originalFilename !== undefined) file.originalFilename = originalFilename;
    if (parents !== undefined) {
      file.parents = parents;
      if (creating && file.parents.length === 0) file.parents = [this.data.rootId];
    }
    if (body.labels !== undefined) {
      if (!body.labels || typeof body.labels !== 'object') throw badRequest('Invalid value for labels', 'labels');
      for (const key of ['starred', 'hidden', 'restricted', 'viewed'] as const) {
        const v = (body.labels as Record<string, unknown>)[key];
        if (v === undefined) continue;
        if (typeof v !== 'boolean') throw badRequest(`Invalid value for labels.${key}`, `labels.${key}`);
        file.labels[key] = v;
      }
    }
    if (body.properties !== undefined) {
      if (!Array.isArray(body.properties)) throw badRequest('Invalid value for properties', 'properties');
      for (const p of body.properties as { key?: unknown; value?: unknown; visibility?: unknown }[]) {
        if (typeof p?.key !== 'string' || typeof p.value !== 'string') throw badRequest('A property needs a key and a value', 'properties');
        const visibility = p.visibility === 'PUBLIC' ? 'PUBLIC' : 'PRIVATE';
        file.properties = file.properties.filter((q) => !(q.key === p.key && q.visibility === visibility));
        file.properties.push({ key: p.key, value: p.value, visibility });
      }
    }
  }
}
