// Push notifications (STO-CHANGES-WATCH, STO-FILES-WATCH, STO-CHANNELS-STOP): a channel gets a `sync` message
// first, then one POST per change batch — `change` for the change log, `update`/`trash`/`untrash`/`remove` for a
// watched file — with Drive's X-Goog-Channel-* and X-Goog-Resource-* headers and an empty body. One channel's
// messages are sent in order, one at a time; each delivery is recorded for `/_gantry/notifications`.
import { randomBytes } from 'node:crypto';
import type { Ctx, Handler } from './context.js';
import { badRequest, notFound, readJson, StorageFailure } from './http.js';
import type { Model } from './model.js';
import type { ChannelRecord } from './store.js';

const HOUR = 3600_000;
const MAX_FILE_MS = 24 * HOUR;
const MAX_CHANGES_MS = 7 * 24 * HOUR;
const TIMEOUT_MS = 10_000;
const MAX_RECORDED = 1000;

export interface Delivery {
  channelId: string;
  state: string;
  messageNumber: number;
  status: number | null;
  error?: string;
  at: string;
}

export class Channels {
  private queues = new Map<string, Promise<void>>();
  private pending = new Map<string, string>();
  private flushScheduled = false;
  readonly deliveries: Delivery[] = [];

  constructor(private readonly model: Model) {
    model.onChange = (fileId, deleted) => this.changed(fileId, deleted);
  }

  private changed(fileId: string, deleted: boolean): void {
    const file = this.model.data.files[fileId];
    const state = deleted || !file ? 'remove' : file.explicitlyTrashed ? 'trash' : 'update';
    this.pending.set(fileId, state);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = new Map(this.pending);
    this.pending.clear();
    const now = Date.now();
    for (const channel of Object.values(this.model.data.channels)) {
      if (channel.expiration !== undefined && channel.expiration <= now) {
        delete this.model.data.channels[channel.id];
        continue;
      }
      if (channel.fileId === undefined) this.send(channel, 'change');
      else if (batch.has(channel.fileId)) this.send(channel, batch.get(channel.fileId)!);
    }
  }

  send(channel: ChannelRecord, state: string): void {
    const number = ++channel.messageNumber;
    const headers: Record<string, string> = {
      'x-goog-channel-id': channel.id,
      'x-goog-message-number': String(number),
      'x-goog-resource-id': channel.resourceId,
      'x-goog-resource-uri': channel.resourceUri,
      'x-goog-resource-state': state,
      ...(channel.token !== undefined ? { 'x-goog-channel-token': channel.token } : {}),
      ...(channel.expiration !== undefined ? { 'x-goog-channel-expiration': new Date(channel.expiration).toUTCString() } : {}),
    };
    const previous = this.queues.get(channel.id) ?? Promise.resolve();
    const next = previous.then(async () => {
      const record: Delivery = { channelId: channel.id, state, messageNumber: number, status: null, at: new Date().toISOString() };
      try {
        const res = await fetch(channel.address, { method: 'POST', headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
        await res.arrayBuffer().catch(() => undefined);
        record.status = res.status;
      } catch (error) {
        record.error = (error as Error).message;
      }
      this.deliveries.push(record);
      if (this.deliveries.length > MAX_RECORDED) this.deliveries.splice(0, this.deliveries.length - MAX_RECORDED);
    });
    this.queues.set(channel.id, next);
  }

  /** Resolves once no notification is in flight. */
  async idle(): Promise<void> {
    while (this.flushScheduled || [...this.queues.values()].length > 0) {
      if (this.flushScheduled) await new Promise((r) => setImmediate(r));
      const all = [...this.queues.entries()];
      await Promise.all(all.map(([, p]) => p));
      for (const [id, p] of all) if (this.queues.get(id) === p) this.queues.delete(id);
    }
  }
}

async function register(ctx: Ctx, fileId: string | undefined, resourceUri: string, maxMs: number): Promise<ChannelRecord> {
  const body = await readJson(ctx.req);
  if (typeof body.id !== 'string' || !/^[A-Za-z0-9\-_+/=]{1,64}$/.test(body.id))
    throw badRequest('A channel id is 1-64 characters of [A-Za-z0-9-_+/=]', 'id', body.id === undefined ? 'required' : 'invalid');
  if (body.type !== 'web_hook' && body.type !== 'webhook')
    throw badRequest('The channel type must be web_hook', 'type', body.type === undefined ? 'required' : 'invalid');
  let address: URL;
  try {
    address = new URL(String(body.address));
  } catch {
    throw badRequest('The channel address must be an https (or, on this dev server, http) URL', 'address');
  }
  if (address.protocol !== 'https:' && address.protocol !== 'http:')
    throw badRequest('The channel address must be an https (or, on this dev server, http) URL', 'address');
  if (ctx.model.data.channels[body.id]) throw new StorageFailure(400, 'channelIdNotUnique', `Channel id ${body.id} not unique`, 'id');
  const now = Date.now();
  let expiration = now + HOUR;
  if (body.expiration !== undefined) {
    const asked = Number(body.expiration);
    if (!Number.isSafeInteger(asked) || asked <= now) throw badRequest('The expiration is a time in the future, in milliseconds since the epoch', 'expiration');
    expiration = Math.min(asked, now + maxMs);
  }
  if (body.token !== undefined && typeof body.token !== 'string') throw badRequest('Invalid value for token', 'token');
  const channel: ChannelRecord = {
    id: body.id,
    resourceId: randomBytes(16).toString('base64url'),
    resourceUri,
    address: address.href,
    expiration,
    messageNumber: 0,
    ...(fileId ? { fileId } : {}),
    ...(typeof body.token === 'string' ? { token: body.token } : {}),
  };
  ctx.model.data.channels[channel.id] = channel;
  ctx.channels.send(channel, 'sync');
  return channel;
}

function channelJson(c: ChannelRecord) {
  return {
    kind: 'api#channel',
    id: c.id,
    resourceId: c.resourceId,
    resourceUri: c.resourceUri,
    ...(c.token !== undefined ? { token: c.token } : {}),
    ...(c.expiration !== undefined ? { expiration: String(c.expiration) } : {}),
  };
}

export const watchChanges: Handler = async (ctx) => {
  const token = ctx.query.get('pageToken') ?? String(ctx.model.data.largestChangeId + 1);
  const channel = await register(ctx, undefined, `${ctx.origin}/storage/v2/changes?alt=json&pageToken=${encodeURIComponent(token)}`, MAX_CHANGES_MS);
  return { status: 200, body: channelJson(channel) };
};

export const watchFile: Handler = async (ctx) => {
  const file = ctx.model.file(ctx.params.fileId!);
  const channel = await register(ctx, file.id, `${ctx.origin}/storage/v2/files/${file.id}?alt=json`, MAX_FILE_MS);
  return { status: 200, body: channelJson(channel) };
};

export const stop: Handler = async (ctx) => {
  const body = await readJson(ctx.req);
  if (typeof body.id !== 'string') throw badRequest('Required: id', 'id', 'required');
  const channel = ctx.model.data.channels[body.id];
  if (!channel || (body.resourceId !== undefined && body.resourceId !== channel.resourceId)) throw notFound(body.id, 'Channel', 'id');
  delete ctx.model.data.channels[channel.id];
  return { status: 204 };
};
