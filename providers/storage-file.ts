/**
 * StorageFile: a file in the storage service with content from a local file (`source`, streamed) or a string
 * (`content`), as a Pulumi dynamic resource.
 *
 * The content is compared by md5: Check computes the md5 of the local content (a file is read a MiB at a time, never
 * whole), Diff compares it with the service's `md5Checksum`, so an unchanged file is never uploaded again and one
 * changed in the service outside Pulumi is put back. A changed content is uploaded as a new revision of the same
 * file (files.update with media at /upload/storage/v2/files/{id}: same id, same links, the service keeps the earlier
 * revisions); a new name, parent, description or mimeType is a metadata patch. A file trashed outside Pulumi is drift
 * that the next `up` takes out of the trash; one deleted outside is gone (refresh) or created again (up).
 *
 * `content` may be a secret: the state then holds it encrypted as an input (where the engine keeps every input) and
 * only its md5 (`contentMd5`) as an output — never the text. Delete trashes the file; `permanentDelete: true`
 * deletes it, skipping the trash. Only the file this resource created is ever trashed or deleted.
 *
 * The provider object below (made by `serializedProvider`, ./serialized.ts) is what Pulumi serializes into
 * `__provider`: its methods capture nothing and load `storageFileOperations` through `gantry/providers` in the
 * plugin, where the token is read from STORAGE_TOKEN or a `gantry auth` login (./storage-shared.ts).
 */
import * as pulumi from '@pulumi/pulumi';
import { GantryError } from '../lib/errors.js';
import { upload, type File } from '../lib/storage/index.js';
import { changedInputs, containsUnknown, defined, knownFailures, pickInputs } from './inputs.js';
import { serializedProvider, type Operations } from './serialized.js';
import {
  checkId,
  checkName,
  checkOptionalBoolean,
  checkOptionalString,
  describeValue,
  descriptionWanted,
  FOLDER_MIME,
  gantryMarker,
  getFile,
  inParent,
  isGone,
  isTrashed,
  md5OfFile,
  md5OfText,
  moveTo,
  parentOf,
  storageConfig,
  withStorage,
} from './storage-shared.js';

export interface StorageFileArgs {
  /** The id of the folder the file sits in (`root` for the root folder). A new parent moves the file. */
  parent: pulumi.Input<string>;
  /** The file's name (its title). A new name renames the file. */
  name: pulumi.Input<string>;
  /** A local file to upload (relative to the Pulumi program's folder, or absolute). Exactly one of source and content. */
  source?: pulumi.Input<string>;
  /** The content as text (UTF-8), at most 5 MiB; may be a secret. Exactly one of source and content. */
  content?: pulumi.Input<string>;
  /** The content's media type; default what the service makes of application/octet-stream. */
  mimeType?: pulumi.Input<string>;
  description?: pulumi.Input<string>;
  /** On delete, delete the file (and its revisions) instead of trashing it. */
  permanentDelete?: pulumi.Input<boolean>;
}

export interface StorageFileInputs {
  parent: string;
  name: string;
  source?: string;
  content?: string;
  /** The md5 (hex) of the local content, computed by Check. */
  contentMd5?: string;
  mimeType?: string;
  description?: string;
  permanentDelete?: boolean;
}

/** Outputs: the inputs without `content`, and what the service says of the file. */
export interface StorageFileOutputs extends Omit<StorageFileInputs, 'content'> {
  /** The service's md5 of the file's current content. */
  md5Checksum?: string;
  /** Bytes, as a decimal string (Drive v2's int64). */
  fileSize?: string;
  /** The revision the content is; a new one on each content upload. */
  headRevisionId?: string;
  alternateLink?: string;
  webContentLink?: string;
  createdDate?: string;
  trashed: boolean;
}

/** Above this, give the content as a file (`source`): the engine keeps `content` in the state. */
export const maxContentBytes = 5 * 1024 * 1024;

const providerType = 'gantry:storage:StorageFile';

const storageFileProvider = serializedProvider('storageFileOperations', {
  config: storageConfig,
  withSettings: ['diff', 'create', 'read', 'update', 'delete'],
  withoutSettings: ['check'],
});

export class StorageFile extends pulumi.dynamic.Resource {
  declare readonly parent: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  declare readonly source: pulumi.Output<string | undefined>;
  declare readonly contentMd5: pulumi.Output<string>;
  declare readonly mimeType: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | undefined>;
  declare readonly permanentDelete: pulumi.Output<boolean | undefined>;
  declare readonly md5Checksum: pulumi.Output<string>;
  declare readonly fileSize: pulumi.Output<string>;
  declare readonly headRevisionId: pulumi.Output<string>;
  declare readonly alternateLink: pulumi.Output<string | undefined>;
  declare readonly webContentLink: pulumi.Output<string | undefined>;
  declare readonly createdDate: pulumi.Output<string | undefined>;
  declare readonly trashed: pulumi.Output<boolean>;

  constructor(name: string, args: StorageFileArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      storageFileProvider,
      name,
      {
        parent: args.parent,
        name: args.name,
        source: args.source,
        content: args.content,
        mimeType: args.mimeType,
        description: args.description,
        permanentDelete: args.permanentDelete,
        contentMd5: undefined,
        md5Checksum: undefined,
        fileSize: undefined,
        headRevisionId: undefined,
        alternateLink: undefined,
        webContentLink: undefined,
        createdDate: undefined,
        trashed: undefined,
      },
      opts,
      providerType,
    );
  }
}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

const resource = 'StorageFile';

/** A media type as a header carries it: type/subtype and parameters. */
const mediaTypePattern = /^[\w!#$&^.+-]{1,127}\/[\w!#$&^.+-]{1,127}(?:\s*;[\x20-\x7e]*)?$/;

/** What the program gives; `contentMd5`, an input too, is Check's. */
const givenKeys = ['parent', 'name', 'source', 'content', 'mimeType', 'description', 'permanentDelete'] as const;

function outputsOf(inputs: StorageFileInputs, file: File): StorageFileOutputs {
  const { content: _content, ...rest } = inputs;
  return defined({
    ...rest,
    mimeType: file.mimeType ?? inputs.mimeType,
    md5Checksum: file.md5Checksum,
    fileSize: file.fileSize,
    headRevisionId: file.headRevisionId,
    alternateLink: file.alternateLink,
    webContentLink: file.webContentLink,
    createdDate: file.createdDate,
    trashed: isTrashed(file),
  });
}

/** What the upload reads: the local file (streamed by the upload) or the text. */
function sourceOf(inputs: StorageFileInputs): string | Buffer {
  return inputs.source !== undefined ? inputs.source : Buffer.from(inputs.content ?? '', 'utf8');
}

/** What differs between the file in the service and the inputs: the properties an update would change. */
function drift(live: File, olds: Partial<StorageFileOutputs> | undefined, news: StorageFileInputs): string[] {
  const changed: string[] = [];
  if (live.title !== news.name) changed.push('name');
  if (!inParent(live.parents, news.parent)) changed.push('parent');
  const description = descriptionWanted(olds, news);
  if (description !== undefined && (live.description ?? '') !== description) changed.push('description');
  if (news.mimeType !== undefined && live.mimeType !== news.mimeType) changed.push('mimeType');
  if (news.contentMd5 !== undefined && live.md5Checksum?.toLowerCase() !== news.contentMd5) changed.push('content');
  if (isTrashed(live)) changed.push('trashed');
  return changed;
}

export const storageFileOperations = {
  async check(_olds, news) {
    const inputs = pickInputs<StorageFileInputs>(news, givenKeys);
    const failures: pulumi.dynamic.CheckFailure[] = [];
    checkId(failures, inputs.parent, 'parent', 'a folder id or "root"');
    checkName(failures, inputs.name);
    checkOptionalString(failures, inputs.description, 'description');
    checkOptionalBoolean(failures, inputs.permanentDelete, 'permanentDelete');
    if (inputs.mimeType !== undefined) {
      if (typeof inputs.mimeType !== 'string' || !mediaTypePattern.test(inputs.mimeType)) {
        failures.push({ property: 'mimeType', reason: `mimeType must be a media type such as text/plain, got ${describeValue(inputs.mimeType)}` });
      } else if (inputs.mimeType === FOLDER_MIME) failures.push({ property: 'mimeType', reason: 'a folder is a StorageFolder, not a StorageFile' });
    }
    const hasSource = inputs.source !== undefined;
    const hasContent = inputs.content !== undefined;
    if (hasSource === hasContent) {
      failures.push({
        property: hasSource ? 'content' : 'source',
        reason: `give exactly one of source (a local file) and content (text), ${hasSource ? 'not both' : 'got neither'}`,
      });
    } else if (hasContent) {
      // Never echo the content: it may be a secret.
      if (typeof inputs.content !== 'string')
        failures.push({
          property: 'content',
          reason: `content must be a string (UTF-8 text), got ${Array.isArray(inputs.content) ? 'an array' : typeof inputs.content}`,
        });
      else if (!containsUnknown(inputs.content)) {
        const bytes = Buffer.byteLength(inputs.content, 'utf8');
        if (bytes > maxContentBytes)
          failures.push({
            property: 'content',
            reason: `content is ${bytes} bytes, over ${maxContentBytes}: give a larger content as a file (source), which is streamed and kept out of the state`,
          });
        else inputs.contentMd5 = md5OfText(inputs.content);
      }
    } else if (typeof inputs.source !== 'string' || inputs.source.trim() === '') {
      failures.push({ property: 'source', reason: `source must be the path of a local file, got ${describeValue(inputs.source)}` });
    } else if (!containsUnknown(inputs.source)) {
      try {
        inputs.contentMd5 = (await md5OfFile(inputs.source)).md5;
      } catch (error) {
        if (!(error instanceof GantryError)) throw error;
        failures.push({ property: 'source', reason: `source ${error.message}${error.hint ? ` (${error.hint})` : ''}` });
      }
    }
    return { inputs, failures: knownFailures(inputs, failures) };
  },

  async diff(settings, id, olds, news) {
    const changed = new Set<string>(
      changedInputs(olds, news, ['permanentDelete', 'name', 'parent', 'source', 'contentMd5', 'description'], { permanentDelete: false }),
    );
    if (news.mimeType !== undefined && olds.mimeType !== news.mimeType) changed.add('mimeType');
    // Content not known yet (a preview): it may change.
    if (containsUnknown(news.content) || containsUnknown(news.source)) changed.add('content');
    // The state may be stale: the file is compared with the service (its md5 among the rest), so a change made
    // outside Pulumi is put right on this update without a refresh; a file deleted outside is created again.
    const live = await withStorage(settings, resource, (client) => getFile(client, id));
    if (!live) return { changes: true, replaces: ['id'], deleteBeforeReplace: false };
    for (const key of drift(live, olds, news)) changed.add(key);
    return { changes: changed.size > 0, replaces: [], deleteBeforeReplace: false };
  },

  async create(settings, inputs) {
    return withStorage(settings, resource, async (client) => {
      const file = await upload(client.transport, {
        source: sourceOf(inputs),
        metadata: defined({
          title: inputs.name,
          parents: [{ id: inputs.parent }],
          description: inputs.description,
          mimeType: inputs.mimeType,
          properties: [gantryMarker],
        }),
        ...(inputs.mimeType !== undefined ? { mimeType: inputs.mimeType } : {}),
      });
      return { id: String(file.id), outs: outputsOf(inputs, file as File) };
    });
  },

  async read(settings, id, props?) {
    return withStorage(settings, resource, async (client): Promise<pulumi.dynamic.ReadResult<StorageFileOutputs>> => {
      const live = await getFile(client, id);
      // Deleted outside Pulumi: no id, so the engine forgets the file.
      if (!live) return { id: '' };
      const inputs: StorageFileInputs = defined({
        parent: parentOf(live.parents, props?.parent),
        name: String(live.title),
        source: props?.source,
        contentMd5: props?.contentMd5,
        description: props?.description !== undefined ? (live.description ?? '') : undefined,
        permanentDelete: props?.permanentDelete,
      });
      return { id, props: outputsOf(inputs, live) };
    });
  },

  async update(settings, id, olds, news) {
    return withStorage(settings, resource, async (client) => {
      let live = await client.files.get({ fileId: id });
      if (isTrashed(live)) live = await client.files.untrash({ fileId: id });
      const newContent = news.contentMd5 === undefined || live.md5Checksum?.toLowerCase() !== news.contentMd5;
      const body: File = {};
      if (live.title !== news.name) body.title = news.name;
      const description = descriptionWanted(olds, news);
      if (description !== undefined && (live.description ?? '') !== description) body.description = description;
      if (!newContent && news.mimeType !== undefined && live.mimeType !== news.mimeType) body.mimeType = news.mimeType;
      const move = moveTo(live.parents, news.parent);
      if (Object.keys(body).length > 0 || move) live = await client.files.patch({ fileId: id, ...move, requestBody: body });
      if (newContent) {
        // A new revision of the same file: files.update with media.
        live = (await upload(client.transport, {
          source: sourceOf(news),
          fileId: id,
          mimeType: news.mimeType ?? live.mimeType ?? 'application/octet-stream',
        })) as File;
      }
      return { outs: outputsOf(news, live) };
    });
  },

  async delete(settings, id, props) {
    await withStorage(settings, resource, async (client) => {
      try {
        if (props.permanentDelete === true) await client.files.delete({ fileId: id });
        else await client.files.trash({ fileId: id });
      } catch (error) {
        // Already deleted outside Pulumi: nothing left to do.
        if (!isGone(error)) throw error;
      }
    });
  },
} satisfies Operations<typeof storageFileProvider, StorageFileInputs, StorageFileOutputs>;
