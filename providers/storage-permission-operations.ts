// The implementation behind `storagePermissionOperations` (./storage-permission.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import type * as pulumi from '@pulumi/pulumi';
import type { Permission, StorageClient } from '../lib/storage/index.js';
import { changedInputs, defined, knownFailures, pickInputs } from './inputs.js';
import type { Operations } from './serialized.js';
import { checkId, checkOptionalBoolean, checkOptionalString, describeValue, diffWithService, orGone, readFromService, withStorage } from './storage-shared.js';
import {
  storagePermissionRoles,
  storagePermissionTypes,
  storagePermissionProvider,
  inputKeys,
  type StoragePermissionRole,
  type StoragePermissionType,
  type StoragePermissionInputs,
  type StoragePermissionOutputs,
} from './storage-permission.js';

const resource = 'StoragePermission';
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const domainPattern = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
/** Changing these makes another permission. */
const replacing = ['fileId', 'type', 'emailAddress', 'domain', 'withLink'] as const;

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

function getPermission(client: StorageClient, fileId: string, permissionId: string): Promise<Permission | undefined> {
  return orGone(client.permissions.get({ fileId, permissionId }));
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
    const changed = changedInputs(olds, news, ['role', 'sendNotificationEmails', 'emailMessage']);
    // A role changed outside Pulumi is put back on this update; a permission removed outside is inserted again.
    const { fileId, permissionId } = splitId(id, olds);
    const get = (client: StorageClient) => getPermission(client, fileId, permissionId);
    return diffWithService(settings, resource, get, changed, (live) => (roleOf(live) !== news.role ? ['role'] : []), true);
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
    const { fileId, permissionId } = splitId(id, props);
    const inputsOf = (live: Permission): StoragePermissionInputs =>
      defined({
        ...props,
        fileId,
        role: roleOf(live) as StoragePermissionRole,
        type: live.type as StoragePermissionType,
        emailAddress: live.type === 'user' || live.type === 'group' ? live.emailAddress?.toLowerCase() : undefined,
        domain: live.type === 'domain' ? live.domain?.toLowerCase() : undefined,
        withLink: live.type === 'anyone' ? (props?.withLink !== undefined || live.withLink === true ? live.withLink === true : undefined) : undefined,
      });
    const get = (client: StorageClient) => getPermission(client, fileId, permissionId);
    return readFromService(settings, resource, id, get, (live) => outputsOf(inputsOf(live), live));
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
      // The permission, or its file, may be gone already.
      await orGone(client.permissions.delete({ fileId, permissionId }));
    });
  },
} satisfies Operations<typeof storagePermissionProvider, StoragePermissionInputs, StoragePermissionOutputs>;
