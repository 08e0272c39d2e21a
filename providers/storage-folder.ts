/**
 * StorageFolder: a folder in the storage service (Drive v2's `application/vnd.google-apps.folder`), as a Pulumi
 * dynamic resource. A new name, parent or description is a metadata patch of the same folder (its id and links
 * stay); a folder trashed outside Pulumi is drift that the next `up` takes out of the trash; one deleted outside is
 * gone (refresh) or replaced (up).
 *
 * Delete trashes the folder (`permanentDelete: true` deletes it, skipping the trash), and refuses while the folder
 * holds anything that is not in the trash — what others put there, or another stack's files — so that Gantry never
 * removes what it did not create; with `permanentDelete` it also refuses when the trash inside holds an item Gantry
 * did not make (a permanent delete takes the folder's trashed content with it).
 *
 * The provider object below (made by `serializedProvider`, ./serialized.ts) is what Pulumi serializes into
 * `__provider`: its methods capture nothing and load `storageFolderOperations` through `gantry/providers` in the
 * plugin, where the token is read from STORAGE_TOKEN or a `gantry auth` login (./storage-shared.ts).
 */
import * as pulumi from '@pulumi/pulumi';
import { UsageError } from '../lib/errors.js';
import type { File, StorageClient } from '../lib/storage/index.js';
import { changedInputs, defined, knownFailures, pickInputs } from './inputs.js';
import { serializedProvider, type Operations } from './serialized.js';
import {
  checkId,
  checkName,
  checkOptionalBoolean,
  checkOptionalString,
  descriptionWanted,
  FOLDER_MIME,
  gantryMarker,
  getFile,
  inParent,
  isGone,
  isTrashed,
  madeByGantry,
  moveTo,
  parentOf,
  storageConfig,
  withStorage,
} from './storage-shared.js';

export interface StorageFolderArgs {
  /** The folder's name (its title). A new name renames the folder. */
  name: pulumi.Input<string>;
  /** The id of the folder it sits in; default `root`. A new parent moves the folder. */
  parent?: pulumi.Input<string>;
  description?: pulumi.Input<string>;
  /** On delete, delete the folder instead of trashing it. */
  permanentDelete?: pulumi.Input<boolean>;
}

export interface StorageFolderInputs {
  name: string;
  parent: string;
  description?: string;
  permanentDelete?: boolean;
}

export interface StorageFolderOutputs extends StorageFolderInputs {
  /** The folder's page in the service's web interface. */
  alternateLink?: string;
  /** Set when the service publishes the folder's content on the web. */
  webViewLink?: string;
  createdDate?: string;
  /** True when the folder is in the trash (drift: the next `up` takes it out). */
  trashed: boolean;
}

const providerType = 'gantry:storage:StorageFolder';

const storageFolderProvider = serializedProvider('storageFolderOperations', {
  config: storageConfig,
  withSettings: ['diff', 'create', 'read', 'update', 'delete'],
  withoutSettings: ['check'],
});

export class StorageFolder extends pulumi.dynamic.Resource {
  declare readonly name: pulumi.Output<string>;
  declare readonly parent: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | undefined>;
  declare readonly permanentDelete: pulumi.Output<boolean | undefined>;
  declare readonly alternateLink: pulumi.Output<string | undefined>;
  declare readonly webViewLink: pulumi.Output<string | undefined>;
  declare readonly createdDate: pulumi.Output<string | undefined>;
  declare readonly trashed: pulumi.Output<boolean>;

  constructor(name: string, args: StorageFolderArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      storageFolderProvider,
      name,
      {
        name: args.name,
        parent: args.parent,
        description: args.description,
        permanentDelete: args.permanentDelete,
        alternateLink: undefined,
        webViewLink: undefined,
        createdDate: undefined,
        trashed: undefined,
      },
      opts,
      providerType,
    );
  }
}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

const resource = 'StorageFolder';

const inputKeys = ['name', 'parent', 'description', 'permanentDelete'] as const;

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
  const changed: string[] = [];
  if (live.title !== news.name) changed.push('name');
  if (!inParent(live.parents, news.parent)) changed.push('parent');
  const description = descriptionWanted(olds, news);
  if (description !== undefined && (live.description ?? '') !== description) changed.push('description');
  if (isTrashed(live)) changed.push('trashed');
  if (live.mimeType !== undefined && live.mimeType !== FOLDER_MIME) throw new UsageError(`${resource}: ${live.id} is no longer a folder (${live.mimeType})`);
  return changed;
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
    checkName(failures, inputs.name);
    checkId(failures, inputs.parent, 'parent', 'a folder id or "root"');
    checkOptionalString(failures, inputs.description, 'description');
    checkOptionalBoolean(failures, inputs.permanentDelete, 'permanentDelete');
    return { inputs, failures: knownFailures(inputs, failures) };
  },

  async diff(settings, id, olds, news) {
    const changed = new Set<string>(changedInputs(olds, news, inputKeys, { permanentDelete: false }));
    // The state may be stale: the folder is compared with the service, so a rename, a move or a trash done outside
    // Pulumi is put right on this update without a refresh; a folder deleted outside is created again.
    const live = await withStorage(settings, resource, (client) => getFile(client, id));
    if (!live) return { changes: true, replaces: ['id'], deleteBeforeReplace: false };
    for (const key of drift(live, olds, news)) changed.add(key);
    return { changes: changed.size > 0, replaces: [], deleteBeforeReplace: false };
  },

  async create(settings, inputs) {
    return withStorage(settings, resource, async (client) => {
      const folder = await client.files.insert({
        requestBody: defined({
          title: inputs.name,
          mimeType: FOLDER_MIME,
          parents: [{ id: inputs.parent }],
          description: inputs.description,
          properties: [gantryMarker],
        }),
      });
      return { id: String(folder.id), outs: outputsOf(inputs, folder) };
    });
  },

  async read(settings, id, props?) {
    return withStorage(settings, resource, async (client): Promise<pulumi.dynamic.ReadResult<StorageFolderOutputs>> => {
      const live = await getFile(client, id);
      // Deleted outside Pulumi: no id, so the engine forgets the folder.
      if (!live) return { id: '' };
      const inputs = defined({
        name: String(live.title),
        parent: parentOf(live.parents, props?.parent),
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
      const body: File = {};
      if (live.title !== news.name) body.title = news.name;
      const description = descriptionWanted(olds, news);
      if (description !== undefined && (live.description ?? '') !== description) body.description = description;
      const move = moveTo(live.parents, news.parent);
      if (Object.keys(body).length > 0 || move) live = await client.files.patch({ fileId: id, ...move, requestBody: body });
      return { outs: outputsOf(news, live) };
    });
  },

  async delete(settings, id, props) {
    await withStorage(settings, resource, async (client) => {
      const permanent = props.permanentDelete === true;
      try {
        const found = await blockers(client, id, permanent);
        if (found.length > 0) {
          throw new UsageError(
            `${resource} "${props.name}" (${id}) is not ${permanent ? 'deleted' : 'trashed'}: it holds what Gantry did not create or remove: ${found.join('; ')}`,
            {
              code: 'STORAGE_FOLDER_NOT_EMPTY',
              hint: 'move those items out of the folder (or trash them yourself) and run again; `pulumi state delete <urn>` makes the stack forget the folder and leaves it as it is',
            },
          );
        }
        if (permanent) await client.files.delete({ fileId: id });
        else await client.files.trash({ fileId: id });
      } catch (error) {
        // Already deleted outside Pulumi: nothing left to do.
        if (!isGone(error)) throw error;
      }
    });
  },
} satisfies Operations<typeof storageFolderProvider, StorageFolderInputs, StorageFolderOutputs>;
