// The implementation behind `storageFileOperations` (./storage-file.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import type * as pulumi from '@pulumi/pulumi';
import { GantryError } from '../lib/errors.js';
import { upload, type File } from '../lib/storage/index.js';
import { changedInputs, containsUnknown, defined, knownFailures, pickInputs } from './inputs.js';
import type { Operations } from './serialized.js';
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
  untrashed,
  withStorage,
} from './storage-shared.js';
import { maxContentBytes, storageFileProvider, givenKeys, type StorageFileInputs, type StorageFileOutputs } from './storage-file.js';

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
