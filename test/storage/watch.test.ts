// Push notifications through the storage client: watchChanges/watchFile register a channel (changes.watch,
// files.watch) with a random id and token, the receiver (createChannelReceiver) accepts the embedded server's POSTs —
// a `sync` first, then `change` or the file's state — as typed notifications, refuses forged tokens and unknown
// channels, and channels.stop ends them.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChannelReceiver, type ChannelNotification, type ChannelReceiver } from '../../lib/storage/index.js';
import { setup, type Setup } from './helpers.js';

/** The next notification, or a failure after `ms`. */
async function next(iterator: AsyncIterator<ChannelNotification>, ms = 5000): Promise<ChannelNotification> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      iterator.next(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no notification within ${ms} ms`)), ms))),
    ]);
    assert.equal(result.done, false);
    return result.value;
  } finally {
    clearTimeout(timer);
  }
}

async function post(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers });
  await res.arrayBuffer();
  return res.status;
}

describe('storage client: changes and files watched through channels', function () {
  this.timeout(30_000);
  let s: Setup;
  let receiver: ChannelReceiver;
  let address: string;
  let inbox: AsyncIterator<ChannelNotification>;
  before(async () => {
    s = await setup();
    receiver = createChannelReceiver({ logger: s.logger });
    address = await receiver.listen();
    inbox = receiver.notifications();
  });
  after(async () => {
    await receiver.close();
    await s.close();
  });

  it('STO-CHANGES-WATCH STO-CHANNELS-STOP: a sync message first, then a change, typed; after stop, none — and the channel is forgotten', async () => {
    assert.match(address, /^http:\/\/127\.0\.0\.1:\d+\/notifications$/);
    const watch = await s.client.watchChanges({ address, receiver });
    assert.equal(watch.channel.kind, 'api#channel');
    assert.ok(watch.resourceId);
    assert.ok(watch.expiration instanceof Date && watch.expiration.getTime() > Date.now());
    const sync = await next(inbox);
    assert.equal(sync.state, 'sync');
    assert.equal(sync.channelId, watch.id);
    assert.equal(sync.messageNumber, 1);
    assert.equal(sync.resourceId, watch.resourceId);
    assert.match(sync.resourceUri, /\/storage\/v2\/changes\?/);
    assert.equal(sync.expiration?.getTime(), Math.floor(watch.expiration!.getTime() / 1000) * 1000);
    assert.equal('token' in sync, false, 'the channel token is not handed on');
    const file = await s.client.files.insert({ requestBody: { title: 'watched' } });
    const change = await next(inbox);
    assert.equal(change.state, 'change');
    assert.equal(change.messageNumber, 2);
    assert.equal(
      (await s.client.changes.list({ pageToken: '1' })).items?.some((c) => c.fileId === file.id),
      true,
    );
    await watch.stop();
    await s.client.files.insert({ requestBody: { title: 'not watched any more' } });
    const sent = await s.h.server.notifications();
    assert.deepEqual(
      sent.filter((d) => d.channelId === watch.id).map((d) => [d.state, d.status]),
      [
        ['sync', 200],
        ['change', 200],
      ],
    );
    assert.equal(
      await post(address, {
        'x-goog-channel-id': watch.id,
        'x-goog-resource-id': watch.resourceId,
        'x-goog-resource-uri': 'u',
        'x-goog-resource-state': 'change',
        'x-goog-message-number': '3',
      }),
      404,
      'a stopped channel is unknown',
    );
    assert.equal((await s.h.api('POST', '/storage/v2/channels/stop', { id: watch.id })).status, 404, 'the server no longer has it');
  });

  it('STO-FILES-WATCH STO-CHANNELS-STOP: a watched file sends sync, then update and trash; another file sends nothing', async () => {
    const file = await s.client.files.insert({ requestBody: { title: 'one file' } });
    const watch = await s.client.watchFile({ fileId: file.id!, address, receiver, token: 'a-token-of-my-own' });
    assert.equal((await next(inbox)).state, 'sync');
    await s.client.files.insert({ requestBody: { title: 'another file' } });
    await s.client.files.patch({ fileId: file.id!, requestBody: { description: 'changed' } });
    const update = await next(inbox);
    assert.equal(update.state, 'update');
    assert.equal(update.channelId, watch.id);
    assert.match(update.resourceUri, new RegExp(`/storage/v2/files/${file.id}`));
    await s.client.files.trash({ fileId: file.id! });
    assert.equal((await next(inbox)).state, 'trash');
    await watch.stop();
    await watch.stop();
  });

  it('STO-CHANGES-WATCH: a forged channel token, an unknown channel, another resource and a malformed message are refused and never handed on; a resent message number is not handed on twice', async () => {
    const watch = await s.client.watchChanges({ address, receiver });
    const sync = await next(inbox);
    const refusedBefore = receiver.refused;
    const good = {
      'x-goog-channel-id': watch.id,
      'x-goog-resource-id': watch.resourceId,
      'x-goog-resource-uri': sync.resourceUri,
      'x-goog-resource-state': 'change',
      'x-goog-message-number': '50',
    };
    const { token } = watch.channel;
    assert.ok(token && token.length >= 40, 'a random token was registered');
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': `${token!.slice(0, -1)}${token!.endsWith('x') ? 'y' : 'x'}` }), 403, 'forged token');
    assert.equal(await post(address, good), 403, 'no token');
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': token!, 'x-goog-channel-id': 'someone-else' }), 404, 'unknown channel');
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': token!, 'x-goog-resource-id': 'other' }), 403, 'another resource');
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': token!, 'x-goog-message-number': 'one' }), 400, 'malformed');
    assert.equal((await fetch(address, { headers: good })).status, 405, 'not a POST');
    assert.equal(receiver.refused - refusedBefore, 6);
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': token! }), 200);
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': token! }), 200, 'a resent message is acknowledged');
    assert.equal(await post(address, { ...good, 'x-goog-channel-token': token!, 'x-goog-message-number': '51' }), 200);
    assert.deepEqual([(await next(inbox)).messageNumber, (await next(inbox)).messageNumber], [50, 51], 'none of the refused ones, and 50 once');
    await watch.stop();
    assert.ok(!s.logs.join('\n').includes(token!), 'the channel token is not logged');
    assert.ok(s.logs.some((line) => /refused \(403\): channel .*: the channel token does not match/.test(line)));
  });

  it("STO-CHANGES-WATCH STO-CHANNELS-STOP: the receiver as a handler in a server of one's own, with a callback; a failing callback answers 500 so that the sender tries again", async () => {
    const seen: ChannelNotification[] = [];
    let fail = false;
    const own = createChannelReceiver({
      logger: s.logger,
      onNotification: async (n) => {
        if (fail) throw new Error('busy');
        seen.push(n);
      },
    });
    const server = http.createServer((req, res) => (req.url === '/hooks/storage' ? own.handle(req, res) : res.writeHead(404).end()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/storage`;
      const watch = await s.client.watchChanges({ address: url, receiver: own, params: { includeDeleted: true } });
      await s.h.server.notifications();
      assert.deepEqual(
        seen.map((n) => n.state),
        ['sync'],
      );
      fail = true;
      await s.client.files.insert({ requestBody: { title: 'while busy' } });
      const delivered = (await s.h.server.notifications()).filter((d) => d.channelId === watch.id);
      assert.deepEqual(
        delivered.map((d) => d.status),
        [200, 500],
      );
      assert.equal(seen.length, 1);
      fail = false;
      await s.client.files.insert({ requestBody: { title: 'free again' } });
      await s.h.server.notifications();
      assert.deepEqual(
        seen.map((n) => [n.state, n.messageNumber]),
        [
          ['sync', 1],
          ['change', 3],
        ],
      );
      await watch.stop();
    } finally {
      await own.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('STO-CHANGES-WATCH STO-FILES-WATCH: a watch refused by the service leaves the receiver expecting nothing; bad options are a UsageError before anything is sent', async () => {
    const file = await s.client.files.insert({ requestBody: { title: 'w' } });
    const first = await s.client.watchFile({ fileId: file.id!, address, receiver, id: 'fixed-channel-id' });
    await next(inbox);
    const refused = await s.client
      .watchFile({ fileId: file.id!, address, receiver, id: 'fixed-channel-id', token: 'other-channel-token-7f3a' })
      .catch((e: Error & { reason?: string }) => e);
    assert.equal((refused as { reason?: string }).reason, 'channelIdNotUnique');
    assert.equal(
      await post(address, {
        'x-goog-channel-id': 'fixed-channel-id',
        'x-goog-channel-token': 'other-channel-token-7f3a',
        'x-goog-resource-id': first.resourceId,
        'x-goog-resource-uri': 'u',
        'x-goog-resource-state': 'update',
        'x-goog-message-number': '9',
      }),
      404,
      'the refused registration was forgotten',
    );
    const before = (await s.admin('GET', 'stats')).requests;
    for (const options of [
      { address: 'http://example.com/hook' },
      { address: 'not a url' },
      { address, id: 'has space' },
      { address, expiration: -1 },
    ] as const) {
      const error = await s.client.watchChanges(options as never).catch((e: Error & { exitCode?: number }) => e);
      assert.equal((error as { exitCode?: number }).exitCode, 2, JSON.stringify(options));
      assert.match((error as Error).message, /^StorageClient\.watchChanges: options\./);
    }
    assert.equal((await s.admin('GET', 'stats')).requests, before);
  });
});
