/**
 * What the three storage resources (StorageFolder, StorageFile, StoragePermission) share: the connection, read at
 * run time in the plugin, the checks of their common inputs, and how a file's place and state are compared with the
 * service's. Not serialized: the resources' `__provider` loads their operations through `gantry/providers`, which
 * import this module there.
 *
 * Settings: the service root from STORAGE_BASE_URL, else the stack config `gantry:storageBaseUrl`; the token from
 * STORAGE_TOKEN in the plugin's environment, else the `gantry auth` login of the profile GANTRY_AUTH_PROFILE (default
 * `default`), its server and client from GANTRY_AUTH_URL / GANTRY_OAUTH_CLIENT_ID (else `gantry:authUrl` /
 * `gantry:oauthClientId`, else the one login the profile index records), its access token refreshed as it runs out.
 * Read in the plugin for each operation: never an input, never in the state or `__provider`.
 */
import type * as pulumi from '@pulumi/pulumi';
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { openProfileLogin } from '../lib/auth/index.js';
import { GantryError, UsageError } from '../lib/errors.js';
import { environmentKv } from '../lib/secrets/index.js';
import { createStorageClient, StorageError, type File, type ParentReference, type Property, type StorageClient } from '../lib/storage/index.js';
import { defined } from './inputs.js';
import { storageConfig, type StorageSettings } from './storage-config.js';

export { FOLDER_MIME } from '../lib/storage/index.js';

/** Marks what the resources create, so a folder's delete can tell Gantry's own content from what others put there. */
export const gantryMarker: Property = { key: 'gantry', value: 'pulumi', visibility: 'PRIVATE' };

export function madeByGantry(file: File): boolean {
  return (file.properties ?? []).some((p) => p.key === gantryMarker.key && p.value === gantryMarker.value);
}

const noToken = (resource: string, why: string, cause?: unknown) =>
  new UsageError(`${resource}: no storage token: STORAGE_TOKEN is not set in the environment Pulumi runs the provider in, and ${why}`, {
    code: 'STORAGE_NO_TOKEN',
    hint: 'export STORAGE_TOKEN before `pulumi up`, or log in with `gantry auth login --scope storage.file` (with GANTRY_AUTH_URL and GANTRY_OAUTH_CLIENT_ID, and the same GANTRY_AUTH_PROFILE) as the user who runs it; either is read at run time and never stored',
    ...(cause !== undefined ? { cause } : {}),
  });

/**
 * A client for one operation, and what closes it. The token is read here, in the plugin: STORAGE_TOKEN, else the
 * `gantry auth` login the environment (or the stack configuration) selects, refreshed as it runs out. No address, or
 * neither a token nor a login, is a usage error saying where to set it, before anything is sent.
 */
export async function connectStorage(settings: StorageSettings | undefined, resource: string): Promise<{ client: StorageClient; close(): void }> {
  const baseUrl = process.env.STORAGE_BASE_URL?.trim() || settings?.storageBaseUrl?.trim();
  if (!baseUrl) {
    throw new UsageError(`${resource}: no storage API address`, {
      code: 'STORAGE_NO_BASE_URL',
      hint: 'set STORAGE_BASE_URL in the environment of `pulumi up`, or `pulumi config set gantry:storageBaseUrl <url>`',
    });
  }
  const token = process.env.STORAGE_TOKEN?.trim();
  if (token) {
    const client = createStorageClient({ baseUrl, token });
    return { client, close: () => client.close() };
  }
  const byKey = new Map(Object.entries(storageConfig).map(([name, key]) => [key as string, settings?.[name]]));
  // A login kept in the kv engine (as `gantry auth` keeps it when SECRETS_ADDR is set).
  const kv = environmentKv(process.env);
  const release = () => kv.close();
  let login: Awaited<ReturnType<typeof openProfileLogin>>;
  try {
    login = await openProfileLogin({ env: process.env, config: (key) => byKey.get(key), kv: () => kv.open() });
  } catch (error) {
    release();
    if (error instanceof GantryError && error.code === 'AUTH_NOT_LOGGED_IN') throw noToken(resource, error.message, error);
    throw error;
  }
  const client = createStorageClient({ baseUrl, token: login.session });
  return {
    client,
    close() {
      client.close();
      login.session.close();
      release();
    },
  };
}

export async function withStorage<T>(settings: StorageSettings | undefined, resource: string, work: (client: StorageClient) => Promise<T>): Promise<T> {
  const connection = await connectStorage(settings, resource);
  try {
    return await work(connection.client);
  } finally {
    connection.close();
  }
}

/** The service's 404: the file (or permission) is gone, or the token may not see it. */
export function isGone(error: unknown): boolean {
  return error instanceof StorageError && error.status === 404;
}

/** What the call answers, or undefined when what it asks for is gone (deleted outside Pulumi). */
export async function orGone<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

/** `files.get`, or undefined when the file is gone. */
export function getFile(client: StorageClient, fileId: string): Promise<File | undefined> {
  return orGone(client.files.get({ fileId }));
}

/**
 * Diff against the service, as the state may be stale: what `changed` in the inputs, and what `drift` finds of the
 * resource as the service has it — a change made outside Pulumi is put right on this update, without a refresh —
 * or, when it is gone, a replace of `id` that creates it again.
 */
export async function diffWithService<Live>(
  settings: StorageSettings | undefined,
  resource: string,
  get: (client: StorageClient) => Promise<Live | undefined>,
  changed: Iterable<string>,
  drift: (live: Live) => Iterable<string>,
  deleteBeforeReplace = false,
): Promise<pulumi.dynamic.DiffResult> {
  const live = await withStorage(settings, resource, get);
  if (!live) return { changes: true, replaces: ['id'], deleteBeforeReplace };
  const keys = new Set([...changed, ...drift(live)]);
  return { changes: keys.size > 0, replaces: [], deleteBeforeReplace: false };
}

/** Read (refresh): the outputs of the resource as the service has it; gone outside Pulumi, no id: the engine forgets it. */
export async function readFromService<Live, Outputs>(
  settings: StorageSettings | undefined,
  resource: string,
  id: string,
  get: (client: StorageClient) => Promise<Live | undefined>,
  outputs: (live: Live) => Outputs,
): Promise<pulumi.dynamic.ReadResult<Outputs>> {
  const live = await withStorage(settings, resource, get);
  return live ? { id, props: outputs(live) } : { id: '' };
}

// ---- a file or folder: what StorageFile and StorageFolder share ----

/** `diffWithService` for a file or folder: the file by its id. */
export function diffFile(
  settings: StorageSettings | undefined,
  resource: string,
  id: string,
  changed: Iterable<string>,
  drift: (live: File) => Iterable<string>,
): Promise<pulumi.dynamic.DiffResult> {
  return diffWithService(settings, resource, (client) => getFile(client, id), changed, drift);
}

/** `readFromService` for a file or folder: the file by its id. */
export function readFile<Outputs>(
  settings: StorageSettings | undefined,
  resource: string,
  id: string,
  outputs: (live: File) => Outputs,
): Promise<pulumi.dynamic.ReadResult<Outputs>> {
  return readFromService(settings, resource, id, (client) => getFile(client, id), outputs);
}

/** The inputs a file and a folder share. */
export interface FileInputs {
  name: string;
  parent: string;
  description?: string;
  permanentDelete?: boolean;
}

export function checkFileInputs(failures: CheckFailure[], inputs: FileInputs): void {
  checkId(failures, inputs.parent, 'parent', 'a folder id or "root"');
  checkName(failures, inputs.name);
  checkOptionalString(failures, inputs.description, 'description');
  checkOptionalBoolean(failures, inputs.permanentDelete, 'permanentDelete');
}

/** A new file's metadata: its name, place and description, marked as Gantry's. */
export function newFileMetadata(inputs: FileInputs, mimeType: string | undefined) {
  return defined({ title: inputs.name, mimeType, parents: [{ id: inputs.parent }], description: inputs.description, properties: [gantryMarker] });
}

/** What differs of a file's name, place, description and trash between the service and the inputs. */
export function fileDrift(live: File, olds: Partial<FileInputs> | undefined, news: FileInputs): string[] {
  const changed: string[] = [];
  if (live.title !== news.name) changed.push('name');
  if (!inParent(live.parents, news.parent)) changed.push('parent');
  const description = descriptionWanted(olds, news);
  if (description !== undefined && (live.description ?? '') !== description) changed.push('description');
  if (isTrashed(live)) changed.push('trashed');
  return changed;
}

/** The file as the service has it, taken out of the trash if it was trashed outside Pulumi. */
export async function untrashed(client: StorageClient, fileId: string): Promise<File> {
  const live = await client.files.get({ fileId });
  return isTrashed(live) ? client.files.untrash({ fileId }) : live;
}

/** Patches what differs of the file's name, description and place from the inputs, with `body` (more to patch). */
export async function patchFile(client: StorageClient, fileId: string, live: File, olds: FileInputs, news: FileInputs, body: File = {}): Promise<File> {
  const patch: File = { ...body };
  if (live.title !== news.name) patch.title = news.name;
  const description = descriptionWanted(olds, news);
  if (description !== undefined && (live.description ?? '') !== description) patch.description = description;
  const move = moveTo(live.parents, news.parent);
  return Object.keys(patch).length > 0 || move ? client.files.patch({ fileId, ...move, requestBody: patch }) : live;
}

/** The shared inputs of a file read from the service: a description only when the stack manages one. */
export function fileInputsOf(live: File, props: Partial<FileInputs> | undefined): FileInputs {
  return defined({
    name: String(live.title),
    parent: parentOf(live.parents, props?.parent),
    description: props?.description !== undefined ? (live.description ?? '') : undefined,
    permanentDelete: props?.permanentDelete,
  });
}

/** Trashes the file, or deletes it (skipping the trash); already deleted outside Pulumi is nothing left to do. */
export async function removeFile(client: StorageClient, fileId: string, permanent: boolean): Promise<void> {
  await orGone<unknown>(permanent ? client.files.delete({ fileId }) : client.files.trash({ fileId }));
}

export const isTrashed = (file: File): boolean => file.labels?.trashed === true;

/** True when the file sits in exactly the folder asked for (`root` is the root folder's alias). */
export function inParent(parents: ParentReference[] | undefined, wanted: string): boolean {
  const list = parents ?? [];
  return list.length === 1 && (list[0]!.id === wanted || (wanted === 'root' && list[0]!.isRoot === true));
}

/** The parent to report for a file: what the stack says when the file is there, else where it is now. */
export function parentOf(parents: ParentReference[] | undefined, declared: string | undefined): string {
  if (declared !== undefined && inParent(parents, declared)) return declared;
  const first = parents?.[0];
  if (!first) return 'root';
  return first.isRoot ? 'root' : String(first.id);
}

/** files.patch's addParents/removeParents to move a file into `wanted`, or undefined when it is there already. */
export function moveTo(parents: ParentReference[] | undefined, wanted: string): { addParents?: string; removeParents?: string } | undefined {
  if (inParent(parents, wanted)) return undefined;
  const list = parents ?? [];
  const kept = list.some((p) => p.id === wanted || (wanted === 'root' && p.isRoot === true));
  const remove = list.filter((p) => !(p.id === wanted || (wanted === 'root' && p.isRoot === true))).map((p) => String(p.id));
  return { ...(kept ? {} : { addParents: wanted }), ...(remove.length > 0 ? { removeParents: remove.join(',') } : {}) };
}

/**
 * A description is managed once the program gives one: then it is compared (and a removed one cleared); a file
 * whose program never named a description keeps whatever it has.
 */
export function descriptionWanted(olds: { description?: unknown } | undefined, news: { description?: unknown }): string | undefined {
  if (typeof news.description === 'string') return news.description;
  return typeof olds?.description === 'string' ? '' : undefined;
}

// ---- checks of inputs ----

type CheckFailure = pulumi.dynamic.CheckFailure;

const idPattern = /^[A-Za-z0-9_-]{1,256}$/;

export function checkName(failures: CheckFailure[], value: unknown, property = 'name'): void {
  if (typeof value !== 'string' || value.trim() === '')
    failures.push({ property, reason: `${property} must be a non-empty string, got ${describeValue(value)}` });
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f]/.test(value)) failures.push({ property, reason: `${property} must not hold control characters (a new line, a tab …)` });
}

export function checkId(failures: CheckFailure[], value: unknown, property: string, what: string): void {
  if (typeof value !== 'string' || !idPattern.test(value)) {
    failures.push({ property, reason: `${property} must be ${what} (letters, digits, - and _), got ${describeValue(value)}` });
  }
}

export function checkOptionalString(failures: CheckFailure[], value: unknown, property: string): void {
  if (value !== undefined && typeof value !== 'string') failures.push({ property, reason: `${property} must be a string, got ${describeValue(value)}` });
}

export function checkOptionalBoolean(failures: CheckFailure[], value: unknown, property: string): void {
  if (value !== undefined && typeof value !== 'boolean') failures.push({ property, reason: `${property} must be true or false, got ${describeValue(value)}` });
}

/** A value's type, or a short JSON of it: never a long value (a file's content is not echoed). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return value.length > 80 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : typeof value;
}

// ---- content ----

/**
 * The md5 (hex) of a local file, read a MiB at a time — never the whole file in memory. A missing path, a folder, a
 * device or a FIFO is a UsageError naming the path.
 */
export async function md5OfFile(path: string): Promise<{ md5: string; size: number }> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`${path} cannot be read (${error.code ?? error.message})`, {
      hint: "give the path of a regular file, relative to the Pulumi program's folder or absolute",
    });
  });
  if (!info.isFile())
    throw new UsageError(`${path} is not a regular file`, {
      hint: "give the path of a regular file (a folder's files are StorageFile resources of their own)",
    });
  const handle = await open(path, 'r');
  try {
    const hash = createHash('md5');
    let size = 0;
    for await (const chunk of handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { md5: hash.digest('hex'), size };
  } finally {
    await handle.close();
  }
}

export function md5OfText(content: string): string {
  return createHash('md5').update(content, 'utf8').digest('hex');
}
