/**
 * A receiver for the storage API's push notifications (changes.watch, files.watch). The service POSTs one request
 * per message with an empty body and Drive's headers: X-Goog-Channel-ID, X-Goog-Channel-Token (what the channel was
 * registered with), X-Goog-Channel-Expiration, X-Goog-Resource-ID, X-Goog-Resource-URI, X-Goog-Resource-State
 * (`sync` first, then `change` for the change log, `update`/`trash`/`untrash`/`remove`/… for a file) and
 * X-Goog-Message-Number. The receiver accepts only channels it was told to expect, checks the token in constant
 * time, drops repeats of a message number (a sender retrying), and hands typed notifications to a callback or an
 * async iterator. Use `handle` in a server of your own, or `listen()` for a small one on 127.0.0.1.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectFunction, expectObject, expectOptions, expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { getLogger, type Logger } from '../log.js';
import { registerSecret } from '../redact.js';

/** X-Goog-Resource-State: `sync` when a channel starts, `change` (change log), or what happened to a watched file. */
export type ResourceState = 'sync' | 'change' | 'add' | 'remove' | 'update' | 'trash' | 'untrash' | 'exists' | 'not_exists' | (string & {});

export interface ChannelNotification {
  channelId: string;
  /** Counts up from 1 (the sync message) per channel. */
  messageNumber: number;
  state: ResourceState;
  /** The watched resource's opaque id (as changes.watch / files.watch answered). */
  resourceId: string;
  resourceUri: string;
  /** When the channel stops by itself, if the service said. */
  expiration?: Date;
  /** X-Goog-Changed: what changed about a file (`content`, `parents`, `properties`, …), if the service said. */
  changed?: string[];
  receivedAt: Date;
}

/** A channel the receiver accepts messages for. */
export interface ExpectedChannel {
  id: string;
  /** The channel token it was registered with; messages must carry exactly this. */
  token?: string;
  /** Once known (the watch's answer), messages must name this resource. */
  resourceId?: string;
}

export interface ChannelReceiverOptions {
  /** Called for each new message; the sender gets its answer once this settles (a throw answers 500: it retries). */
  onNotification?: (notification: ChannelNotification) => void | Promise<void>;
  /** Notifications buffered for the iterator at most (default 1,000); beyond, 503 so that the sender retries. */
  maxQueued?: number;
  logger?: Logger;
}

export interface ChannelReceiver {
  /** A node:http request handler: mount it on the address the channels were registered with. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Accept messages of this channel (call before registering it: the sync message may come before the answer). */
  expect(channel: ExpectedChannel): void;
  /** Refuse this channel's messages from now on. */
  forget(channelId: string): void;
  /** Starts a small server (127.0.0.1, an ephemeral port, path `/notifications` by default); resolves to its URL. */
  listen(options?: { host?: string; port?: number; path?: string }): Promise<string>;
  /** The URL `listen` gave, if it was called. */
  readonly address: string | undefined;
  /** Messages refused so far (unknown channel, wrong token or resource, malformed). */
  readonly refused: number;
  /** Every notification not handed to `onNotification`, in order of arrival; ends at `close()`. One reader. */
  notifications(): AsyncIterableIterator<ChannelNotification>;
  close(): Promise<void>;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Equal strings, compared in time that does not depend on where they differ (nor on their lengths, hashed). */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

interface Known extends ExpectedChannel {
  lastMessage: number;
}

const maxBodyBytes = 64 * 1024;

export function createChannelReceiver(options?: ChannelReceiverOptions): ChannelReceiver {
  expectOptions('createChannelReceiver', options as unknown);
  const onNotification = options?.onNotification;
  if (onNotification !== undefined) expectFunction('createChannelReceiver', 'options.onNotification', onNotification);
  const maxQueued = options?.maxQueued ?? 1000;
  if (!Number.isSafeInteger(maxQueued) || maxQueued < 1)
    throw new UsageError('createChannelReceiver: options.maxQueued must be a whole number of at least 1', { code: 'INVALID_ARGUMENT' });
  const logger = options?.logger ?? getLogger();
  const channels = new Map<string, Known>();
  const queue: ChannelNotification[] = [];
  const waiting: Array<(result: IteratorResult<ChannelNotification>) => void> = [];
  let closed = false;
  let refused = 0;
  let server: http.Server | undefined;
  let address: string | undefined;
  let ownPath: string | undefined;

  const answer = (res: ServerResponse, status: number, message?: string) => {
    if (res.headersSent) return;
    res.writeHead(status, message ? { 'content-type': 'text/plain; charset=utf-8', connection: 'close' } : {});
    res.end(message);
  };
  const refuse = (res: ServerResponse, status: number, message: string) => {
    refused++;
    logger.warn(`storage notification refused (${status}): ${message}`);
    answer(res, status, message);
  };

  function deliver(notification: ChannelNotification): void {
    const next = waiting.shift();
    if (next) next({ value: notification, done: false });
    else queue.push(notification);
  }

  async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (ownPath !== undefined && new URL(req.url ?? '/', 'http://receiver.invalid').pathname !== ownPath) return refuse(res, 404, 'no receiver at this path');
    if ((req.method ?? '').toUpperCase() !== 'POST') {
      res.setHeader('allow', 'POST');
      return refuse(res, 405, 'notifications are POSTed');
    }
    // The body is empty for Drive v2's messages; read (a little of) it so the connection can be reused.
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBodyBytes) return refuse(res, 413, 'a notification has no large body');
    }
    const channelId = header(req, 'x-goog-channel-id');
    if (!channelId) return refuse(res, 400, 'no X-Goog-Channel-ID');
    const known = channels.get(channelId);
    if (!known) return refuse(res, 404, `unknown channel ${JSON.stringify(channelId.slice(0, 64))}`);
    const token = header(req, 'x-goog-channel-token');
    if (known.token !== undefined && (token === undefined || !sameToken(token, known.token)))
      return refuse(res, 403, `channel ${channelId}: the channel token does not match`);
    const resourceId = header(req, 'x-goog-resource-id');
    const resourceUri = header(req, 'x-goog-resource-uri');
    const state = header(req, 'x-goog-resource-state');
    const number = header(req, 'x-goog-message-number');
    if (!resourceId || !resourceUri || !state || !number || !/^\d{1,15}$/.test(number))
      return refuse(res, 400, `channel ${channelId}: a notification needs X-Goog-Resource-ID, -URI, -State and X-Goog-Message-Number`);
    if (known.resourceId !== undefined && resourceId !== known.resourceId) return refuse(res, 403, `channel ${channelId}: the message names another resource`);
    const messageNumber = Number(number);
    if (messageNumber <= known.lastMessage) return answer(res, 200);
    const expirationHeader = header(req, 'x-goog-channel-expiration');
    const expiration = expirationHeader ? new Date(expirationHeader) : undefined;
    const changed = header(req, 'x-goog-changed');
    const notification: ChannelNotification = {
      channelId,
      messageNumber,
      state,
      resourceId,
      resourceUri,
      ...(expiration && !Number.isNaN(expiration.getTime()) ? { expiration } : {}),
      ...(changed
        ? {
            changed: changed
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }
        : {}),
      receivedAt: new Date(),
    };
    if (onNotification) {
      try {
        await onNotification(notification);
      } catch (error) {
        logger.warn(`storage notification ${channelId} #${messageNumber}: the handler failed: ${(error as Error)?.message ?? String(error)}`);
        return answer(res, 500, 'the handler failed; send it again');
      }
    } else {
      if (closed) return answer(res, 503, 'the receiver is closed');
      if (queue.length >= maxQueued) return answer(res, 503, 'too many notifications waiting; send it again later');
      deliver(notification);
    }
    known.lastMessage = messageNumber;
    answer(res, 200);
  }

  const receiver: ChannelReceiver = {
    handle(req, res) {
      receive(req, res).catch((error: unknown) => {
        logger.warn(`storage notification: ${(error as Error)?.message ?? String(error)}`);
        if (!res.headersSent) answer(res, 400, 'could not read the notification');
        else res.destroy();
      });
    },
    expect(channel) {
      expectObject('ChannelReceiver.expect', 'channel', channel, 'an object with the channel id (and its token)');
      expectString('ChannelReceiver.expect', 'channel.id', channel.id);
      if (channel.token !== undefined) {
        expectString('ChannelReceiver.expect', 'channel.token', channel.token);
        registerSecret(channel.token);
      }
      if (channel.resourceId !== undefined) expectString('ChannelReceiver.expect', 'channel.resourceId', channel.resourceId);
      const previous = channels.get(channel.id);
      channels.set(channel.id, { ...channel, lastMessage: previous && previous.token === channel.token ? previous.lastMessage : 0 });
    },
    forget(channelId) {
      channels.delete(channelId);
    },
    async listen(listenOptions) {
      expectOptions('ChannelReceiver.listen', listenOptions);
      if (server) throw new UsageError('the channel receiver is already listening', { code: 'RECEIVER_LISTENING' });
      const host = listenOptions?.host ?? '127.0.0.1';
      const path = listenOptions?.path ?? '/notifications';
      if (!path.startsWith('/')) throw new UsageError('ChannelReceiver.listen: options.path must start with /', { code: 'INVALID_ARGUMENT' });
      ownPath = path;
      const created = http.createServer((req, res) => receiver.handle(req, res));
      await new Promise<void>((resolve, reject) => {
        created.once('error', reject);
        created.listen(listenOptions?.port ?? 0, host, () => {
          created.off('error', reject);
          resolve();
        });
      });
      server = created;
      const bound = created.address() as AddressInfo;
      address = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}${path}`;
      return address;
    },
    get address() {
      return address;
    },
    get refused() {
      return refused;
    },
    notifications() {
      const iterator: AsyncIterableIterator<ChannelNotification> = {
        next: () => {
          const item = queue.shift();
          if (item) return Promise.resolve({ value: item, done: false });
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise<IteratorResult<ChannelNotification>>((resolve) => waiting.push(resolve));
        },
        return: () => Promise.resolve({ value: undefined, done: true }),
        [Symbol.asyncIterator]: () => iterator,
      };
      return iterator;
    },
    async close() {
      closed = true;
      for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true });
      const running = server;
      server = undefined;
      if (running) {
        await new Promise<void>((resolve) => {
          running.close(() => resolve());
          running.closeAllConnections();
        });
      }
    },
  };
  return receiver;
}
