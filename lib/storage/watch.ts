/**
 * Watching with push notifications: a channel registered with changes.watch or files.watch, with a fresh id and a
 * random channel token, told to a receiver (channels.ts) *before* it is registered — the service sends its `sync`
 * message at once, possibly before the answer arrives — and a `stop()` that calls channels.stop and forgets it.
 *
 * A channel has an expiration, after which the service sends nothing more. `keepWatchingChanges`/`keepWatchingFile`
 * keep a watch alive past it: a new channel (new id) is registered `renewalMarginMs` before the current one expires,
 * takes over, and the old one is stopped; a registration that fails is tried again with backoff, and an expiry with no
 * successor is said as an event (read the resource meanwhile: nothing announces it).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { expectObject, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { registerSecret } from '../redact.js';
import { parseServiceUrl } from '../service-url.js';
import type { ChannelNotification, ChannelReceiver } from './channels.js';
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

function channelBody(where: string, options: WatchOptions): { id: string; token: string; body: Channel } {
  expectObject(where, 'options', options, 'an object with the address to notify');
  expectString(where, 'options.address', options.address, 'the https URL the service notifies');
  const url = parseServiceUrl(options.address, { name: `${where}: options.address`, userinfo: true, query: true, code: 'INVALID_ARGUMENT' });
  const id = options.id ?? randomUUID();
  expectString(where, 'options.id', id);
  if (!/^[A-Za-z0-9\-_+/=]{1,64}$/.test(id))
    throw new UsageError(`${where}: options.id must be 1-64 characters of A-Za-z0-9-_+/=`, { code: 'INVALID_ARGUMENT' });
  const token = options.token ?? randomBytes(32).toString('base64url');
  expectString(where, 'options.token', token, 'a non-empty string');
  registerSecret(token);
  let expiration: string | undefined;
  if (options.expiration !== undefined) {
    const ms = options.expiration instanceof Date ? options.expiration.getTime() : options.expiration;
    if (!Number.isSafeInteger(ms) || ms <= 0)
      throw new UsageError(`${where}: options.expiration must be a Date or milliseconds since the epoch`, { code: 'INVALID_ARGUMENT' });
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
    channel,
    id,
    resourceId,
    expiration,
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

// ---- watches that outlive their channels ----

/** What a renewing watch says about a channel (its `stop` is the renewing watch's own business). */
export type WatchedChannel = Pick<Watch, 'channel' | 'id' | 'resourceId' | 'expiration'>;

/**
 * What a renewing watch hands its reader, in order: the current channel's notifications (a renewal's own `sync` and
 * whatever a replaced or replacing channel sends are dropped: during the overlap both announce the same changes), and
 * what happened to the channels. After `renewed`, read the resource once: a change announced only by the replaced
 * channel may have been dropped. After `expired`, and at each `renewalFailed` while `expired` is true, read it too:
 * nothing announces changes until a new channel is registered.
 */
export type WatchEvent =
  | { type: 'notification'; notification: ChannelNotification }
  /** A new channel took over; `previous` was stopped (unless it had expired: then `afterExpiry`). */
  | { type: 'renewed'; channel: WatchedChannel; previous: WatchedChannel; afterExpiry: boolean }
  /** Registering a new channel failed; another attempt follows in `retryInMs`. */
  | { type: 'renewalFailed'; error: unknown; attempt: number; retryInMs: number; expired: boolean; current: WatchedChannel }
  /** The current channel expired before a new one could be registered. */
  | { type: 'expired'; channel: WatchedChannel; error: unknown }
  /** channels.stop of a replaced channel failed: it ends by itself at its expiration; its messages are dropped. */
  | { type: 'stopFailed'; channel: WatchedChannel; error: unknown };

export interface KeepWatchingOptions extends Omit<WatchOptions, 'expiration'> {
  /** Required: the renewing watch reads its notifications (`receiver.notifications()`, one reader) and drops repeats. */
  receiver: ChannelReceiver;
  /**
   * How long each channel is asked to live, in ms (its `expiration` is the time of asking plus this; the service may
   * cap it). Default: ask nothing, and get the service's default (an hour for Drive).
   */
  lifetimeMs?: number;
  /** Debug lines about dropped messages and renewals. */
  logger?: Logger;
}

export interface KeepWatchingChangesOptions extends KeepWatchingOptions {
  /** changes.watch's parameters, or a function giving them for each registration (the page token to go on from). */
  params?: Omit<ChangesListParams, 'signal'> | (() => Omit<ChangesListParams, 'signal'>);
}

export interface KeepWatchingFileOptions extends KeepWatchingOptions {
  fileId: string;
  params?: Omit<FilesGetParams, 'fileId' | 'signal'>;
}

export interface RenewingWatch {
  /** The channel notifications come through now (after an expiry with no successor, the expired one). */
  readonly current: WatchedChannel;
  /** True from the current channel's expiry until a new channel is registered. */
  readonly expired: boolean;
  /** Messages of replaced or replacing channels dropped so far, and renewals' `sync` messages. */
  readonly dropped: number;
  /** The notifications and the channels' events, until `stop()` or the receiver closing. One reader. */
  events(): AsyncIterableIterator<WatchEvent>;
  /** Stops renewing, stops the current channel (channels.stop; an error is thrown after everything is let go). */
  stop(): Promise<void>;
}

const MINUTE = 60_000;

/**
 * How long before its expiration a channel is replaced: a tenth of its lifetime, at least a minute (time for a slow
 * answer and a few attempts again), at most an hour (earlier gains nothing: attempts are at most a minute apart), and
 * never more than half the lifetime (a channel of a few seconds, in a test, lives half its life before renewal).
 */
export function renewalMarginMs(lifetimeMs: number): number {
  return Math.max(0, Math.min(Math.max(lifetimeMs / 10, MINUTE), 60 * MINUTE, lifetimeMs / 2));
}

/**
 * The wait before attempt `attempt + 1` after a failed renewal: doubling from an eighth of the margin (between 1 and
 * 15 s) up to a minute, each wait ±20 % at random so that many watchers do not retry together, and never over a minute.
 */
export function renewalRetryMs(attempt: number, marginMs: number, random: () => number = Math.random): number {
  const first = Math.min(Math.max(marginMs / 8, 1000), 15_000);
  const base = Math.min(first * 2 ** Math.max(0, attempt - 1), MINUTE);
  return Math.round(Math.min(base * (0.8 + 0.4 * random()), MINUTE));
}

const info = (watch: Watch): WatchedChannel => ({ channel: watch.channel, id: watch.id, resourceId: watch.resourceId, expiration: watch.expiration });

function keepWatchingOptions(where: string, options: KeepWatchingOptions): number | undefined {
  expectObject(where, 'options', options, 'an object with the address to notify and the receiver');
  expectObject(where, 'options.receiver', options.receiver, 'a ChannelReceiver (createChannelReceiver)');
  if ((options as WatchOptions).expiration !== undefined) {
    throw new UsageError(`${where}: give options.lifetimeMs, not options.expiration: each channel asks for its own expiration`, { code: 'INVALID_ARGUMENT' });
  }
  const lifetime = options.lifetimeMs;
  if (lifetime !== undefined && (!Number.isSafeInteger(lifetime) || lifetime < 1000)) {
    throw new UsageError(`${where}: options.lifetimeMs must be a whole number of milliseconds, at least 1000`, { code: 'INVALID_ARGUMENT' });
  }
  return lifetime;
}

/** A watch of the change log that registers a new channel before each one expires (see `WatchEvent`). */
export async function keepWatchingChanges(methods: StorageMethods, options: KeepWatchingChangesOptions, where = 'keepWatchingChanges'): Promise<RenewingWatch> {
  const lifetime = keepWatchingOptions(where, options);
  const params = options.params;
  if (params !== undefined && typeof params !== 'function') expectObject(where, 'options.params', params);
  return keepWatching(methods, options, lifetime, (channel) =>
    watchChanges(methods, { ...channel, ...(params !== undefined ? { params: typeof params === 'function' ? params() : params } : {}) }, where),
  );
}

/** A watch of one file that registers a new channel before each one expires (see `WatchEvent`). */
export async function keepWatchingFile(methods: StorageMethods, options: KeepWatchingFileOptions, where = 'keepWatchingFile'): Promise<RenewingWatch> {
  const lifetime = keepWatchingOptions(where, options);
  expectString(where, 'options.fileId', options.fileId, 'a file id');
  return keepWatching(methods, options, lifetime, (channel) =>
    watchFile(methods, { ...channel, fileId: options.fileId, ...(options.params !== undefined ? { params: options.params } : {}) }, where),
  );
}

async function keepWatching(
  methods: StorageMethods,
  options: KeepWatchingOptions,
  lifetimeMs: number | undefined,
  register: (channel: WatchOptions) => Promise<Watch>,
): Promise<RenewingWatch> {
  const { receiver, logger } = options;
  const base: WatchOptions = { address: options.address, receiver, ...(options.token !== undefined ? { token: options.token } : {}) };
  const ask = async (id: string | undefined): Promise<{ watch: Watch; askedAt: number }> => {
    const askedAt = Date.now();
    const watch = await register({ ...base, ...(id !== undefined ? { id } : {}), ...(lifetimeMs !== undefined ? { expiration: askedAt + lifetimeMs } : {}) });
    return { watch, askedAt };
  };
  const first = await ask(options.id);
  let current = first.watch;
  const firstId = current.id;
  let expired = false;
  let closed = false;
  let dropped = 0;
  let lastError: unknown;
  let margin = 0;
  let renewTimer: NodeJS.Timeout | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;
  const forgetTimers = new Map<string, NodeJS.Timeout>();

  const queue: WatchEvent[] = [];
  let wake: (() => void) | undefined;
  const push = (event: WatchEvent) => {
    if (closed) return;
    queue.push(event);
    wake?.();
  };

  /** A replaced channel's stragglers are still taken (200, then dropped) until it expires; then it is forgotten. */
  const forgetAt = (watch: Watch) => {
    const wait = watch.expiration ? Math.max(0, watch.expiration.getTime() - Date.now()) : 0;
    const timer = setTimeout(() => {
      forgetTimers.delete(watch.id);
      receiver.forget(watch.id);
    }, wait);
    timer.unref();
    forgetTimers.set(watch.id, timer);
  };

  const schedule = (watch: Watch, askedAt: number) => {
    if (!watch.expiration) return; // a channel without an end needs no successor
    const ends = watch.expiration.getTime();
    margin = renewalMarginMs(ends - askedAt);
    // Never sooner than a second after asking: a service answering very short lives must not be asked in a loop.
    renewTimer = setTimeout(() => renew(1), Math.max(0, Math.max(askedAt + 1000, ends - margin) - Date.now()));
    renewTimer.unref();
    expiryTimer = setTimeout(
      () => {
        if (closed || current.id !== watch.id) return;
        expired = true;
        logger?.debug(`storage channel ${watch.id} expired with no successor`);
        push({ type: 'expired', channel: info(watch), error: lastError });
      },
      Math.max(0, ends - Date.now()),
    );
    expiryTimer.unref();
  };

  const renew = (attempt: number): void => {
    renewTimer = undefined;
    if (closed) return;
    renewing = (async () => {
      let next: { watch: Watch; askedAt: number };
      try {
        next = await ask(undefined);
      } catch (error) {
        lastError = error;
        if (closed) return;
        const retryInMs = renewalRetryMs(attempt, margin);
        logger?.debug(`storage channel ${current.id}: renewal attempt ${attempt} failed; again in ${retryInMs} ms`);
        renewTimer = setTimeout(() => renew(attempt + 1), retryInMs);
        renewTimer.unref();
        push({ type: 'renewalFailed', error, attempt, retryInMs, expired, current: info(current) });
        return;
      }
      if (closed) {
        await next.watch.stop().catch(() => receiver.forget(next.watch.id));
        return;
      }
      const previous = current;
      const afterExpiry = expired;
      current = next.watch;
      expired = false;
      lastError = undefined;
      clearTimeout(expiryTimer);
      schedule(current, next.askedAt);
      logger?.debug(`storage channel ${current.id} took over from ${previous.id}`);
      push({ type: 'renewed', channel: info(current), previous: info(previous), afterExpiry });
      if (afterExpiry) {
        receiver.forget(previous.id);
        return;
      }
      try {
        await methods.channels.stop({ requestBody: { id: previous.id, resourceId: previous.resourceId } });
      } catch (error) {
        push({ type: 'stopFailed', channel: info(previous), error });
      }
      forgetAt(previous);
    })().finally(() => {
      renewing = undefined;
    });
  };

  schedule(current, first.askedAt);

  const source = receiver.notifications();
  let pending: Promise<IteratorResult<ChannelNotification>> | undefined;
  let ended = false;
  const accepts = (notification: ChannelNotification) =>
    notification.channelId === current.id && !(notification.state === 'sync' && notification.channelId !== firstId);
  const iterator: AsyncIterableIterator<WatchEvent> = {
    async next(): Promise<IteratorResult<WatchEvent>> {
      for (;;) {
        const queued = queue.shift();
        if (queued) return { value: queued, done: false };
        if (ended || closed) return { value: undefined, done: true };
        pending ??= source.next();
        const woken = new Promise<undefined>((resolve) => (wake = () => resolve(undefined)));
        const arrived = await Promise.race([pending, woken]);
        wake = undefined;
        if (arrived === undefined) continue;
        pending = undefined;
        if (arrived.done) {
          ended = true;
          continue;
        }
        const notification = arrived.value;
        if (accepts(notification)) return { value: { type: 'notification', notification }, done: false };
        dropped += 1;
        logger?.debug(
          `storage notification ${notification.channelId} #${notification.messageNumber} (${notification.state}) dropped: ${notification.channelId === current.id ? 'the sync of a renewal' : 'not the current channel'}`,
        );
      }
    },
    async return(): Promise<IteratorResult<WatchEvent>> {
      ended = true;
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };

  return {
    get current() {
      return info(current);
    },
    get expired() {
      return expired;
    },
    get dropped() {
      return dropped;
    },
    events: () => iterator,
    async stop() {
      if (closed) return;
      closed = true;
      clearTimeout(renewTimer);
      clearTimeout(expiryTimer);
      wake?.();
      await renewing?.catch(() => undefined);
      for (const [id, timer] of forgetTimers) {
        clearTimeout(timer);
        receiver.forget(id);
      }
      forgetTimers.clear();
      if (expired) {
        receiver.forget(current.id);
        return;
      }
      try {
        await current.stop();
      } catch (error) {
        receiver.forget(current.id);
        throw error;
      }
    },
  };
}
