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
import type * as pulumi from '@pulumi/pulumi';
import { GantryError } from '../lib/errors.js';
import { upload, type File } from '../lib/storage/index.js';
import { changedInputs, containsUnknown, defined, knownFailures, pickInputs } from './inputs.js';
import { dynamicResource, type ArgsOf } from './resource.js';
import { serializedProvider, serviceMethods, type Operations } from './serialized.js';
import {
  checkFileInputs,
  describeValue,
  diffFile,
  fileDrift,
  fileInputsOf,
  FOLDER_MIME,
  isTrashed,
  md5OfFile,
  md5OfText,
  newFileMetadata,
  patchFile,
  readFile,
  removeFile,
  storageConfig,
  untrashed,
  withStorage,
} from './storage-shared.js';

export interface StorageFileInputs {
  /** The id of the folder the file sits in (`root` for the root folder). A new parent moves the file. */
  parent: string;
  /** The file's name (its title). A new name renames the file. */
  name: string;
  /** A local file to upload (relative to the Pulumi program's folder, or absolute). Exactly one of source and content. */
  source?: string;
  /** The content as text (UTF-8), at most 5 MiB; may be a secret. Exactly one of source and content. */
  content?: string;
  /** The md5 (hex) of the local content, computed by Check. */
  contentMd5?: string;
  /** The content's media type; default what the service makes of application/octet-stream. */
  mimeType?: string;
  description?: string;
  /** On delete, delete the file (and its revisions) instead of trashing it. */
  permanentDelete?: boolean;
}

export type StorageFileArgs = ArgsOf<Omit<StorageFileInputs, 'contentMd5'>>;

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

const storageFileProvider = serializedProvider('storageFileOperations', {
  config: storageConfig,
  ...serviceMethods,
});

/** What the program gives; `contentMd5`, an input too, is Check's. */
const givenKeys = ['parent', 'name', 'source', 'content', 'mimeType', 'description', 'permanentDelete'] as const;

export class StorageFile extends dynamicResource<StorageFileArgs, StorageFileOutputs>(storageFileProvider, {
  type: 'gantry:storage:StorageFile',
  inputs: givenKeys,
  outputs: ['contentMd5', 'md5Checksum', 'fileSize', 'headRevisionId', 'alternateLink', 'webContentLink', 'createdDate', 'trashed'],
}) {}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

const resource = 'StorageFile';

/** A media type as a header carries it: type/subtype and parameters. */
const mediaTypePattern = /^[\w!#$&^.+-]{1,127}\/[\w!#$&^.+-]{1,127}(?:\s*;[\x20-\x7e]*)?$/;

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
  const changed = fileDrift(live, olds, news);
  if (news.mimeType !== undefined && live.mimeType !== news.mimeType) changed.push('mimeType');
  if (news.contentMd5 !== undefined && live.md5Checksum?.toLowerCase() !== news.contentMd5) changed.push('content');
  return changed;
}

export const storageFileOperations = {
  async check(_olds, news) {
    const inputs = pickInputs<StorageFileInputs>(news, givenKeys);
    const failures: pulumi.dynamic.CheckFailure[] = [];
    checkFileInputs(failures, inputs);
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
    // The file's md5 is compared with the service's among the rest.
    return diffFile(settings, resource, id, changed, (live) => drift(live, olds, news));
  },

  async create(settings, inputs) {
    return withStorage(settings, resource, async (client) => {
      const file = await upload(client.transport, {
        source: sourceOf(inputs),
        metadata: newFileMetadata(inputs, inputs.mimeType),
        ...(inputs.mimeType !== undefined ? { mimeType: inputs.mimeType } : {}),
      });
      return { id: String(file.id), outs: outputsOf(inputs, file as File) };
    });
  },

  async read(settings, id, props?) {
    const inputsOf = (live: File): StorageFileInputs => defined({ ...fileInputsOf(live, props), source: props?.source, contentMd5: props?.contentMd5 });
    return readFile(settings, resource, id, (live) => outputsOf(inputsOf(live), live));
  },

  async update(settings, id, olds, news) {
    return withStorage(settings, resource, async (client) => {
      let live = await untrashed(client, id);
      const newContent = news.contentMd5 === undefined || live.md5Checksum?.toLowerCase() !== news.contentMd5;
      const newType = !newContent && news.mimeType !== undefined && live.mimeType !== news.mimeType;
      live = await patchFile(client, id, live, olds, news, newType ? { mimeType: news.mimeType } : {});
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
    await withStorage(settings, resource, (client) => removeFile(client, id, props.permanentDelete === true));
  },
} satisfies Operations<typeof storageFileProvider, StorageFileInputs, StorageFileOutputs>;
