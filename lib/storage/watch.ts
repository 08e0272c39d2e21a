/**
 * Watching with push notifications: a channel registered with changes.watch or files.watch, with a fresh id and a
 * random channel token, told to a receiver (channels.ts) *before* it is registered — the service sends its `sync`
 * message at once, possibly before the answer arrives — and a `stop()` that calls channels.stop and forgets it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { expectObject, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { registerSecret } from '../redact.js';
import type { ChannelReceiver } from './channels.js';
import type { StorageMethods } from './methods.js';
import type { ChangesListParams, FilesGetParams } from './params.js';
import type { Channel } from './types.js';

export interface WatchOptions {
  /** Where the service POSTs the messages: https, or http on 127.0.0.1/localhost (a dev server). */
  address: string;
  /** Told about the channel (id, token, resource) so that it accepts its messages and no others. */
  receiver?: ChannelReceiver;
  /** The channel id (1–64 of `A-Za-z0-9-_+/=`); a random UUID by default. */
  id?: string;
  /** The channel token the messages will carry; 32 random bytes by default. Kept out of logs and errors. */
  token?: string;
  /** When the channel should end (the service caps it: a day for a file, a week for changes). */
  expiration?: Date | number;
}

export interface WatchChangesOptions extends WatchOptions {
  /** changes.watch's own parameters (`pageToken`, `includeDeleted`, `spaces`, …). */
  params?: Omit<ChangesListParams, 'signal'>;
}

export interface WatchFileOptions extends WatchOptions {
  fileId: string;
  params?: Omit<FilesGetParams, 'fileId' | 'signal'>;
}

export interface Watch {
  /** The channel as the service answered (id, resourceId, resourceUri, expiration). */
  channel: Channel;
  id: string;
  resourceId: string;
  expiration: Date | undefined;
  /** channels.stop, then the receiver forgets the channel. */
  stop(): Promise<void>;
}

const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);

function channelBody(where: string, options: WatchOptions): { id: string; token: string; body: Channel } {
  expectObject(where, 'options', options, 'an object with the address to notify');
  expectString(where, 'options.address', options.address, 'the https URL the service notifies');
  let url: URL;
  try {
    url = new URL(options.address);
  } catch {
    throw new UsageError(`${where}: options.address is not a URL`, { code: 'INVALID_ARGUMENT' });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback.has(url.hostname))) {
    throw new UsageError(`${where}: options.address must be https (http only on 127.0.0.1, localhost or [::1]), got ${url.protocol}//${url.host}`, { code: 'INVALID_ARGUMENT' });
  }
  const id = options.id ?? randomUUID();
  expectString(where, 'options.id', id);
  if (!/^[A-Za-z0-9\-_+/=]{1,64}$/.test(id)) throw new UsageError(`${where}: options.id must be 1-64 characters of A-Za-z0-9-_+/=`, { code: 'INVALID_ARGUMENT' });
  const token = options.token ?? randomBytes(32).toString('base64url');
  expectString(where, 'options.token', token, 'a non-empty string');
  registerSecret(token);
  let expiration: string | undefined;
  if (options.expiration !== undefined) {
    const ms = options.expiration instanceof Date ? options.expiration.getTime() : options.expiration;
    if (!Number.isSafeInteger(ms) || ms <= 0) throw new UsageError(`${where}: options.expiration must be a Date or milliseconds since the epoch`, { code: 'INVALID_ARGUMENT' });
    expiration = String(ms);
  }
  return { id, token, body: { id, type: 'web_hook', address: url.href, token, ...(expiration ? { expiration } : {}) } };
}

async function register(methods: StorageMethods, options: WatchOptions, id: string, token: string, send: () => Promise<Channel>): Promise<Watch> {
  const receiver = options.receiver;
  receiver?.expect({ id, token });
  let channel: Channel;
  try {
    channel = await send();
  } catch (error) {
    receiver?.forget(id);
    throw error;
  }
  const resourceId = channel.resourceId ?? '';
  if (receiver && resourceId) receiver.expect({ id, token, resourceId });
  const expiration = channel.expiration !== undefined && /^\d+$/.test(channel.expiration) ? new Date(Number(channel.expiration)) : undefined;
  let stopped = false;
  return {
    channel, id, resourceId, expiration,
    async stop() {
      if (stopped) return;
      await methods.channels.stop({ requestBody: { id, resourceId } });
      stopped = true;
      receiver?.forget(id);
    },
  };
}

export async function watchChanges(methods: StorageMethods, options: WatchChangesOptions, where = 'watchChanges'): Promise<Watch> {
  const { id, token, body } = channelBody(where, options);
  if (options.params !== undefined) expectObject(where, 'options.params', options.params);
  return register(methods, options, id, token, () => methods.changes.watch({ ...options.params, requestBody: body }));
}

export async function watchFile(methods: StorageMethods, options: WatchFileOptions, where = 'watchFile'): Promise<Watch> {
  const { id, token, body } = channelBody(where, options);
  expectString(where, 'options.fileId', options.fileId, 'a file id');
  if (options.params !== undefined) expectObject(where, 'options.params', options.params);
  return register(methods, options, id, token, () => methods.files.watch({ ...options.params, fileId: options.fileId, requestBody: body }));
}
