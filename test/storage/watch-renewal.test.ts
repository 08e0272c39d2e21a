// Watches that outlive their channels (keepWatchingChanges) against the embedded storage server, with channels of a
// few seconds: a new channel takes over before the first expires and the first is stopped (the server says so), the
// watch keeps announcing changes after the first channel's expiry, and what both channels send during the overlap is
// handed on once. A renewal the service refuses is tried again; an expiry meanwhile is said, and a later success
// takes over. A stop the service fails is an event, not an error.
import assert from 'node:assert/strict';
import { createChannelReceiver, type ChannelReceiver } from '../../lib/storage/index.js';
import { keepWatchingChanges, renewalMarginMs, renewalRetryMs, type RenewingWatch, type WatchEvent } from '../../lib/storage/watch.js';
import { setup, type Setup } from './helpers.js';

/** The next event of the watch, or a failure after `ms`. */
async function next(events: AsyncIterator<WatchEvent>, ms = 15_000): Promise<WatchEvent> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      events.next(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no event within ${ms} ms`)), ms))),
    ]);
    assert.equal(result.done, false, 'the events ended');
    return result.value;
  } finally {
    clearTimeout(timer);
  }
}

/** Events until one of `type` (returned last), failing after `ms`. */
async function until(events: AsyncIterator<WatchEvent>, type: WatchEvent['type'], ms = 20_000): Promise<WatchEvent[]> {
  const seen: WatchEvent[] = [];
  const end = Date.now() + ms;
  for (;;) {
    const event = await next(events, Math.max(1, end - Date.now()));
    seen.push(event);
    if (event.type === type) return seen;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers });
  await res.arrayBuffer();
  return res.status;
}

describe('storage client: a watch renews its channel before it expires (keepWatchingChanges)', function () {
  this.timeout(90_000);
  let s: Setup;
  let receiver: ChannelReceiver;
  let address: string;
  let watch: RenewingWatch | undefined;
  beforeEach(async () => {
    s = await setup();
    receiver = createChannelReceiver({ logger: s.logger });
    address = await receiver.listen();
  });
  afterEach(async () => {
    await watch?.stop().catch(() => undefined);
    watch = undefined;
    await receiver.close();
    await s.close();
  });

  it('the margin: a tenth of the lifetime, at least a minute, at most an hour, at most half; retries double up to a minute', () => {
    assert.equal(renewalMarginMs(3600_000), 360_000, "an hour (Drive's default): six minutes before");
    assert.equal(renewalMarginMs(7 * 24 * 3600_000), 3600_000, 'a week: an hour before');
    assert.equal(renewalMarginMs(300_000), 60_000, 'five minutes: a minute before');
    assert.equal(renewalMarginMs(10_000), 5000, 'ten seconds: half of it');
    assert.deepEqual(
      [1, 2, 3, 4, 5, 9].map((attempt) => renewalRetryMs(attempt, 360_000, () => 0.5)),
      [15_000, 30_000, 60_000, 60_000, 60_000, 60_000],
    );
    assert.equal(
      renewalRetryMs(1, 5000, () => 0.5),
      1000,
    );
    for (const r of [0, 0.999]) assert.ok(renewalRetryMs(2, 360_000, () => r) >= 24_000 && renewalRetryMs(9, 360_000, () => r) <= 60_000);
  });

  it("STO-CHANGES-WATCH STO-CHANNELS-STOP: a new channel takes over before the first expires, the first is stopped before its expiry (the server no longer has it), changes are announced after the first channel's expiry, and the renewal's sync and the old channel's messages are not handed on", async () => {
    const pageToken = (await s.client.changes.getStartPageToken()).startPageToken!;
    watch = await keepWatchingChanges(s.client, { address, receiver, lifetimeMs: 8000, token: 'one-token-for-every-channel', params: () => ({ pageToken }) });
    const first = watch.current;
    assert.ok(
      first.expiration && first.expiration.getTime() <= Date.now() + 8000 && first.expiration.getTime() > Date.now() + 6000,
      'the channel asked to live 8 s',
    );
    const events = watch.events();
    const sync = await next(events);
    assert.equal(sync.type, 'notification');
    assert.equal(sync.type === 'notification' && sync.notification.state, 'sync');

    const before = await until(events, 'renewed');
    const renewed = before.at(-1)!;
    assert.ok(renewed.type === 'renewed');
    assert.deepEqual(before.slice(0, -1), [], 'nothing else came before the renewal');
    assert.equal(renewed.previous.id, first.id);
    assert.notEqual(renewed.channel.id, first.id, 'a new channel id');
    assert.equal(renewed.afterExpiry, false);
    assert.equal(watch.current.id, renewed.channel.id);
    // Renewed about 4 s (half of 8 s) before the first channel's end, and the first is stopped — not left to expire.
    assert.ok(Date.now() < first.expiration!.getTime() - 2000, 'renewed well before the expiry');
    for (let i = 0; i < 100 && !s.served.some((line) => line.startsWith('POST /storage/v2/channels/stop 204')); i += 1) await sleep(50);
    assert.ok(
      s.served.some((line) => line.startsWith('POST /storage/v2/channels/stop 204')),
      'channels.stop was called and answered 204',
    );
    assert.equal(
      (await s.h.api('POST', '/storage/v2/channels/stop', { id: first.id, resourceId: first.resourceId })).status,
      404,
      'the server no longer has the first channel',
    );
    assert.ok(Date.now() < first.expiration!.getTime(), 'and that is the stop, not the expiry');
    assert.ok(watch.dropped >= 1, "the new channel's sync was not handed on");

    // A message of the replaced channel still arriving (a sender's straggler) is taken (200) but not handed on.
    const dropped = watch.dropped;
    assert.equal(
      await post(address, {
        'x-goog-channel-id': first.id,
        'x-goog-channel-token': 'one-token-for-every-channel',
        'x-goog-resource-id': first.resourceId,
        'x-goog-resource-uri': 'u',
        'x-goog-resource-state': 'change',
        'x-goog-message-number': '99',
      }),
      200,
    );

    // After the first channel's expiry, a change is still announced — by the second.
    await sleep(Math.max(0, first.expiration!.getTime() - Date.now() + 500));
    const file = await s.client.files.insert({ requestBody: { title: 'after the first channel expired' } });
    // (The second channel, 8 s long too, may have handed over to a third by now: renewals in between are fine.)
    const seen = await until(events, 'notification');
    assert.ok(
      seen.slice(0, -1).every((e) => e.type === 'renewed'),
      seen.map((e) => e.type).join(', '),
    );
    const change = seen.at(-1)!;
    assert.ok(change.type === 'notification');
    assert.equal(change.notification.state, 'change');
    assert.equal(change.notification.channelId, watch.current.id);
    assert.notEqual(change.notification.channelId, first.id);
    assert.ok(watch.dropped >= dropped + 1, 'the straggler was dropped');
    assert.ok((await s.client.changes.list({ pageToken })).items?.some((c) => c.fileId === file.id));
    const sent = await s.h.server.notifications();
    assert.deepEqual(
      sent.filter((d) => d.channelId === first.id).map((d) => d.state),
      ['sync'],
      'the first channel sent nothing after it was stopped',
    );
    assert.deepEqual(
      sent.filter((d) => d.state === 'change').map((d) => [d.channelId, d.status]),
      [[watch.current.id, 200]],
      'the change was sent once, by the current channel',
    );

    const last = watch.current;
    await watch.stop();
    assert.equal((await s.h.api('POST', '/storage/v2/channels/stop', { id: last.id })).status, 404, 'stop() stopped the current channel');
    assert.equal((await events.next()).done, true, 'and ended the events');
  });

  it('STO-CHANGES-WATCH: a renewal the service refuses is tried again with backoff; the expiry meanwhile is an event; the next success takes over, and changes are announced again', async () => {
    watch = await keepWatchingChanges(s.client, { address, receiver, lifetimeMs: 4000 });
    const first = watch.current;
    const events = watch.events();
    assert.equal((await next(events)).type, 'notification');
    // Every registration fails for ~6 s: past the first channel's end (renewal starts 2 s before it).
    await s.admin('POST', 'faults', { kind: 'status', status: 403, path: '/storage/v2/changes/watch', method: 'POST', times: 1000 });
    const failed = await until(events, 'expired');
    const expired = failed.at(-1)!;
    assert.ok(expired.type === 'expired');
    assert.equal(expired.channel.id, first.id);
    assert.ok(Date.now() >= first.expiration!.getTime(), 'said at the expiry');
    assert.match(String((expired.error as Error).message), /403/);
    const attempts = failed.filter((e): e is Extract<WatchEvent, { type: 'renewalFailed' }> => e.type === 'renewalFailed');
    assert.ok(attempts.length >= 1, 'at least one failed attempt before the expiry');
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      attempts.map((_, i) => i + 1),
    );
    assert.ok(attempts.every((a) => !a.expired && a.retryInMs >= 800 && a.retryInMs <= 60_000));
    assert.equal(watch.expired, true);

    const more = await until(events, 'renewalFailed');
    assert.ok(more.at(-1)!.type === 'renewalFailed' && (more.at(-1) as { expired: boolean }).expired, 'an attempt after the expiry says so');
    await s.admin('DELETE', 'faults');
    const back = await until(events, 'renewed', 30_000);
    const renewed = back.at(-1)!;
    assert.ok(renewed.type === 'renewed');
    assert.equal(renewed.afterExpiry, true);
    assert.equal(renewed.previous.id, first.id);
    assert.equal(watch.expired, false);
    await s.client.files.insert({ requestBody: { title: 'announced again' } });
    const change = await next(events);
    assert.ok(change.type === 'notification' && change.notification.state === 'change' && change.notification.channelId === renewed.channel.id);
  });

  it('STO-CHANNELS-STOP: a replaced channel the service fails to stop is a stopFailed event; the watch goes on, and a change both channels announce is handed on once', async () => {
    watch = await keepWatchingChanges(s.client, { address, receiver, lifetimeMs: 8000 });
    const first = watch.current;
    const events = watch.events();
    assert.equal((await next(events)).type, 'notification');
    await s.admin('POST', 'faults', { kind: 'status', status: 500, path: '/storage/v2/channels/stop', method: 'POST', times: 10 });
    const renewed = (await until(events, 'renewed')).at(-1)!;
    assert.ok(renewed.type === 'renewed');
    const stopFailed = await next(events);
    assert.ok(stopFailed.type === 'stopFailed');
    assert.equal(stopFailed.channel.id, first.id);
    assert.match(String((stopFailed.error as Error).message), /500/);
    await s.admin('DELETE', 'faults');

    // Both channels are alive at the server now: one change, two messages sent, one handed on.
    await s.client.files.insert({ requestBody: { title: 'announced by both' } });
    const change = await next(events);
    assert.ok(change.type === 'notification' && change.notification.state === 'change' && change.notification.channelId === renewed.channel.id);
    const sent = await s.h.server.notifications();
    assert.deepEqual(
      sent
        .filter((d) => d.state === 'change')
        .map((d) => d.channelId)
        .sort(),
      [first.id, renewed.channel.id].sort(),
      'both channels announced it',
    );
    await sleep(300);
    const again = await Promise.race([events.next().then(() => 'an event'), sleep(700).then(() => 'nothing')]);
    assert.equal(again, 'nothing', "the replaced channel's message was not handed on");
    assert.ok(Date.now() < first.expiration!.getTime(), "all within the first channel's life");
  });
});
