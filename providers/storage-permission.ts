/**
 * StoragePermission: who may do what with a file or folder of the storage service (permissions.insert), as a
 * Pulumi dynamic resource. A new role is a permissions.patch of the same permission; a new file, type, e-mail
 * address, domain or `withLink` is another permission (replace). Delete removes the permission (permissions.delete).
 *
 * Drive v2 has no `commenter` role of its own: it is `reader` with `additionalRoles: ["commenter"]`, which is what
 * is sent for `role: "commenter"` and how it is read back.
 *
 * The provider object below (made by `serializedProvider`, ./serialized.ts) is what Pulumi serializes into
 * `__provider`: its methods capture nothing and load `storagePermissionOperations` through `gantry/providers` in
 * the plugin, where the token is read from STORAGE_TOKEN or a `gantry auth` login (./storage-shared.ts).
 */
import * as pulumi from '@pulumi/pulumi';
import type { Permission, StorageClient } from '../lib/storage/index.js';
import { changedInputs, defined, knownFailures, pickInputs } from './inputs.js';
import { serializedProvider, type Operations } from './serialized.js';
import { checkId, checkOptionalBoolean, checkOptionalString, describeValue, isGone, storageConfig, withStorage } from './storage-shared.js';

export const storagePermissionRoles = ['reader', 'commenter', 'writer', 'owner'] as const;
export const storagePermissionTypes = ['user', 'group', 'domain', 'anyone'] as const;
export type StoragePermissionRole = (typeof storagePermissionRoles)[number];
export type StoragePermissionType = (typeof storagePermissionTypes)[number];

export interface StoragePermissionArgs {
  /** The file or folder (a folder's permissions reach what it holds). A new one replaces the permission. */
  fileId: pulumi.Input<string>;
  /** A new role patches the permission. `owner` transfers ownership (user permissions only). */
  role: pulumi.Input<StoragePermissionRole>;
  /** Who: a user or group (`emailAddress`), a domain (`domain`), or anyone. A new type replaces the permission. */
  type: pulumi.Input<StoragePermissionType>;
  /** For `user` and `group`. */
  emailAddress?: pulumi.Input<string>;
  /** For `domain`, e.g. `example.com`. */
  domain?: pulumi.Input<string>;
  /** For `anyone`: true for anyone with the link, false (default) for anyone who finds it. */
  withLink?: pulumi.Input<boolean>;
  /** Whether the service e-mails the user or group about the new permission (Drive's default: true). At insert only. */
  sendNotificationEmails?: pulumi.Input<boolean>;
  /** A message in that e-mail. At insert only. */
  emailMessage?: pulumi.Input<string>;
}

export interface StoragePermissionInputs {
  fileId: string;
  role: StoragePermissionRole;
  type: StoragePermissionType;
  emailAddress?: string;
  domain?: string;
  withLink?: boolean;
  sendNotificationEmails?: boolean;
  emailMessage?: string;
}

export interface StoragePermissionOutputs extends StoragePermissionInputs {
  /** The permission's id on the file (the resource's id is `<fileId>/<permissionId>`). */
  permissionId: string;
  /** The user's or group's name, when the service gives one. */
  displayName?: string;
}

const providerType = 'gantry:storage:StoragePermission';

const storagePermissionProvider = serializedProvider('storagePermissionOperations', {
  config: storageConfig,
  withSettings: ['diff', 'create', 'read', 'update', 'delete'],
  withoutSettings: ['check'],
});

export class StoragePermission extends pulumi.dynamic.Resource {
  declare readonly fileId: pulumi.Output<string>;
  declare readonly role: pulumi.Output<StoragePermissionRole>;
  declare readonly type: pulumi.Output<StoragePermissionType>;
  declare readonly emailAddress: pulumi.Output<string | undefined>;
  declare readonly domain: pulumi.Output<string | undefined>;
  declare readonly withLink: pulumi.Output<boolean | undefined>;
  declare readonly permissionId: pulumi.Output<string>;
  declare readonly displayName: pulumi.Output<string | undefined>;

  constructor(name: string, args: StoragePermissionArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      storagePermissionProvider,
      name,
      {
        fileId: args.fileId,
        role: args.role,
        type: args.type,
        emailAddress: args.emailAddress,
        domain: args.domain,
        withLink: args.withLink,
        sendNotificationEmails: args.sendNotificationEmails,
        emailMessage: args.emailMessage,
        permissionId: undefined,
        displayName: undefined,
      },
      opts,
      providerType,
    );
  }
}

// ---- the implementation: not serialized; loaded in the plugin through `gantry/providers` ----

const resource = 'StoragePermission';
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const domainPattern = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
/** Changing these makes another permission. */
const replacing = ['fileId', 'type', 'emailAddress', 'domain', 'withLink'] as const;

const inputKeys = ['fileId', 'role', 'type', 'emailAddress', 'domain', 'withLink', 'sendNotificationEmails', 'emailMessage'] as const;

/** An e-mail address or a domain as the service compares them. */
const lower = (value: unknown) => (typeof value === 'string' ? value.trim().toLowerCase() : value);

/** Drive v2's body for a role: commenter is reader with the additional role. */
function roleBody(role: StoragePermissionRole): Pick<Permission, 'role' | 'additionalRoles'> {
  return role === 'commenter' ? { role: 'reader', additionalRoles: ['commenter'] } : { role, additionalRoles: [] };
}

function roleOf(permission: Permission): string {
  if (permission.role === 'reader' && permission.additionalRoles?.includes('commenter')) return 'commenter';
  return String(permission.role);
}

function outputsOf(inputs: StoragePermissionInputs, permission: Permission): StoragePermissionOutputs {
  return defined({ ...inputs, permissionId: String(permission.id), displayName: permission.name });
}

function splitId(id: string, props: Partial<StoragePermissionOutputs> | undefined): { fileId: string; permissionId: string } {
  if (props?.fileId && props.permissionId) return { fileId: props.fileId, permissionId: props.permissionId };
  const slash = id.indexOf('/');
  return { fileId: id.slice(0, slash), permissionId: id.slice(slash + 1) };
}

async function getPermission(client: StorageClient, fileId: string, permissionId: string): Promise<Permission | undefined> {
  try {
    return await client.permissions.get({ fileId, permissionId });
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

export const storagePermissionOperations = {
  async check(_olds, news) {
    const inputs = pickInputs<StoragePermissionInputs>({ ...news, emailAddress: lower(news.emailAddress), domain: lower(news.domain) }, inputKeys);
    const failures: pulumi.dynamic.CheckFailure[] = [];
    checkId(failures, inputs.fileId, 'fileId', 'a file or folder id');
    if (!(storagePermissionRoles as readonly unknown[]).includes(inputs.role)) {
      failures.push({ property: 'role', reason: `role must be one of ${storagePermissionRoles.join(', ')}, got ${describeValue(inputs.role)}` });
    }
    const type = inputs.type;
    if (!(storagePermissionTypes as readonly unknown[]).includes(type)) {
      failures.push({ property: 'type', reason: `type must be one of ${storagePermissionTypes.join(', ')}, got ${describeValue(type)}` });
    }
    const forEmail = type === 'user' || type === 'group';
    if (forEmail) {
      if (typeof inputs.emailAddress !== 'string' || !emailPattern.test(inputs.emailAddress)) {
        failures.push({
          property: 'emailAddress',
          reason: `a ${type} permission needs emailAddress, an e-mail address, got ${describeValue(inputs.emailAddress)}`,
        });
      }
    } else if (inputs.emailAddress !== undefined)
      failures.push({ property: 'emailAddress', reason: `emailAddress is for user and group permissions, not ${describeValue(type)}` });
    if (type === 'domain') {
      if (typeof inputs.domain !== 'string' || !domainPattern.test(inputs.domain)) {
        failures.push({
          property: 'domain',
          reason: `a domain permission needs domain, a domain name such as example.com, got ${describeValue(inputs.domain)}`,
        });
      }
    } else if (inputs.domain !== undefined) failures.push({ property: 'domain', reason: `domain is for domain permissions, not ${describeValue(type)}` });
    if (inputs.withLink !== undefined && type !== 'anyone') failures.push({ property: 'withLink', reason: 'withLink is for anyone permissions' });
    checkOptionalBoolean(failures, inputs.withLink, 'withLink');
    if (inputs.role === 'owner' && type !== 'user') failures.push({ property: 'role', reason: `only a user can own a file, not ${describeValue(type)}` });
    checkOptionalBoolean(failures, inputs.sendNotificationEmails, 'sendNotificationEmails');
    checkOptionalString(failures, inputs.emailMessage, 'emailMessage');
    if (inputs.emailMessage !== undefined && !forEmail) failures.push({ property: 'emailMessage', reason: 'emailMessage is sent to users and groups only' });
    return { inputs, failures: knownFailures(inputs, failures) };
  },

  async diff(settings, id, olds, news) {
    const replaces = changedInputs(olds, news, replacing);
    if (replaces.length > 0) return { changes: true, replaces, deleteBeforeReplace: true };
    const changed = new Set<string>(changedInputs(olds, news, ['role', 'sendNotificationEmails', 'emailMessage']));
    // Compared with the service: a role changed outside Pulumi is put back on this update; a permission removed
    // outside is inserted again.
    const { fileId, permissionId } = splitId(id, olds);
    const live = await withStorage(settings, resource, (client) => getPermission(client, fileId, permissionId));
    if (!live) return { changes: true, replaces: ['id'], deleteBeforeReplace: true };
    if (roleOf(live) !== news.role) changed.add('role');
    return { changes: changed.size > 0, replaces: [], deleteBeforeReplace: false };
  },

  async create(settings, inputs) {
    return withStorage(settings, resource, async (client) => {
      const permission = await client.permissions.insert(
        defined({
          fileId: inputs.fileId,
          sendNotificationEmails: inputs.sendNotificationEmails,
          emailMessage: inputs.emailMessage,
          requestBody: defined({
            ...roleBody(inputs.role),
            type: inputs.type,
            value: inputs.emailAddress ?? inputs.domain,
            withLink: inputs.withLink,
          }),
        }),
      );
      return { id: `${inputs.fileId}/${permission.id}`, outs: outputsOf(inputs, permission) };
    });
  },

  async read(settings, id, props?) {
    return withStorage(settings, resource, async (client): Promise<pulumi.dynamic.ReadResult<StoragePermissionOutputs>> => {
      const { fileId, permissionId } = splitId(id, props);
      const live = await getPermission(client, fileId, permissionId);
      // Removed outside Pulumi: no id, so the engine forgets the permission.
      if (!live) return { id: '' };
      const inputs: StoragePermissionInputs = defined({
        ...props,
        fileId,
        role: roleOf(live) as StoragePermissionRole,
        type: live.type as StoragePermissionType,
        emailAddress: live.type === 'user' || live.type === 'group' ? live.emailAddress?.toLowerCase() : undefined,
        domain: live.type === 'domain' ? live.domain?.toLowerCase() : undefined,
        withLink: live.type === 'anyone' ? (props?.withLink !== undefined || live.withLink === true ? live.withLink === true : undefined) : undefined,
      });
      return { id, props: outputsOf(inputs, live) };
    });
  },

  async update(settings, id, olds, news) {
    return withStorage(settings, resource, async (client) => {
      const { fileId, permissionId } = splitId(id, olds);
      let live = await client.permissions.get({ fileId, permissionId });
      if (roleOf(live) !== news.role) {
        live = await client.permissions.patch({
          fileId,
          permissionId,
          ...(news.role === 'owner' ? { transferOwnership: true } : {}),
          requestBody: roleBody(news.role),
        });
      }
      return { outs: outputsOf(news, live) };
    });
  },

  async delete(settings, id, props) {
    await withStorage(settings, resource, async (client) => {
      const { fileId, permissionId } = splitId(id, props);
      try {
        await client.permissions.delete({ fileId, permissionId });
      } catch (error) {
        // The permission, or its file, is already gone.
        if (!isGone(error)) throw error;
      }
    });
  },
} satisfies Operations<typeof storagePermissionProvider, StoragePermissionInputs, StoragePermissionOutputs>;
