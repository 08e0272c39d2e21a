// The implementation behind `storageFolderOperations` (./storage-folder.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import type * as pulumi from '@pulumi/pulumi';
import { UsageError } from '../lib/errors.js';
import type { File, StorageClient } from '../lib/storage/index.js';
import { changedInputs, defined, knownFailures, pickInputs } from './inputs.js';
import type { Operations } from './serialized.js';
import {
  checkFileInputs,
  diffFile,
  fileDrift,
  fileInputsOf,
  FOLDER_MIME,
  isTrashed,
  madeByGantry,
  newFileMetadata,
  orGone,
  patchFile,
  readFile,
  removeFile,
  untrashed,
  withStorage,
} from './storage-shared.js';
import { storageFolderProvider, inputKeys, type StorageFolderInputs, type StorageFolderOutputs } from './storage-folder.js';

const resource = 'StorageFolder';

function outputsOf(inputs: StorageFolderInputs, folder: File): StorageFolderOutputs {
  return defined({
    ...inputs,
    alternateLink: folder.alternateLink,
    webViewLink: folder.webViewLink,
    createdDate: folder.createdDate,
    trashed: isTrashed(folder),
  });
}

/** What differs between the folder in the service and the inputs: the properties an update would change. */
function drift(live: File, olds: Partial<StorageFolderInputs> | undefined, news: StorageFolderInputs): string[] {
  if (live.mimeType !== undefined && live.mimeType !== FOLDER_MIME) throw new UsageError(`${resource}: ${live.id} is no longer a folder (${live.mimeType})`);
  return fileDrift(live, olds, news);
}

/** What in the folder stops a delete: items not in the trash, and with `permanent` trashed items Gantry did not make. */
async function blockers(client: StorageClient, folderId: string, permanent: boolean): Promise<string[]> {
  const found: string[] = [];
  const walk = async (id: string, depth: number): Promise<void> => {
    for await (const child of client.files.list.all({ q: `'${id}' in parents` })) {
      if (found.length >= 5) return;
      if (!isTrashed(child)) found.push(`"${child.title}" (${child.id}) is not in the trash`);
      else if (permanent && !madeByGantry(child)) found.push(`"${child.title}" (${child.id}) was not made by Gantry`);
      else if (permanent && child.mimeType === FOLDER_MIME && depth < 32) await walk(String(child.id), depth + 1);
    }
  };
  await walk(folderId, 0);
  return found;
}

export const storageFolderOperations = {
  async check(_olds, news) {
    const inputs = pickInputs<StorageFolderInputs>({ ...news, parent: news.parent ?? 'root' }, inputKeys);
    const failures: pulumi.dynamic.CheckFailure[] = [];
    checkFileInputs(failures, inputs);
    return { inputs, failures: knownFailures(inputs, failures) };
  },

  async diff(settings, id, olds, news) {
    const changed = changedInputs(olds, news, inputKeys, { permanentDelete: false });
    return diffFile(settings, resource, id, changed, (live) => drift(live, olds, news));
  },

  async create(settings, inputs) {
    return withStorage(settings, resource, async (client) => {
      const folder = await client.files.insert({ requestBody: newFileMetadata(inputs, FOLDER_MIME) });
      return { id: String(folder.id), outs: outputsOf(inputs, folder) };
    });
  },

  async read(settings, id, props?) {
    return readFile(settings, resource, id, (live) => outputsOf(fileInputsOf(live, props), live));
  },

  async update(settings, id, olds, news) {
    return withStorage(settings, resource, async (client) => {
      const live = await patchFile(client, id, await untrashed(client, id), olds, news);
      return { outs: outputsOf(news, live) };
    });
  },

  async delete(settings, id, props) {
    await withStorage(settings, resource, async (client) => {
      const permanent = props.permanentDelete === true;
      // Gone already (deleted outside Pulumi): nothing left to do.
      const found = await orGone(blockers(client, id, permanent));
      if (found === undefined) return;
      if (found.length > 0) {
        throw new UsageError(
          `${resource} "${props.name}" (${id}) is not ${permanent ? 'deleted' : 'trashed'}: it holds what Gantry did not create or remove: ${found.join('; ')}`,
          {
            code: 'STORAGE_FOLDER_NOT_EMPTY',
            hint: 'move those items out of the folder (or trash them yourself) and run again; `pulumi state delete <urn>` makes the stack forget the folder and leaves it as it is',
          },
        );
      }
      await removeFile(client, id, permanent);
    });
  },
} satisfies Operations<typeof storageFolderProvider, StorageFolderInputs, StorageFolderOutputs>;
