// Push notifications of the embedded storage server: changes.watch and files.watch send a sync first, then one
// message per change with Drive's X-Goog-* headers; channels.stop ends them.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { harness, type Harness } from './helpers.js';

interface Message {
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('devserver/storage: watch channels', function () {
  this.timeout(20_000);
  let h: Harness;
  let receiver: http.Server;
  let address: string;
  const messages: Message[] = [];
  before(async () => {
    h = await harness();
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        messages.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    address = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await h.close();
    await new Promise((r) => receiver.close(r));
  });

  it('STO-CHANGES-WATCH STO-CHANNELS-STOP: a sync message first, then change messages with X-Goog-Channel-*/X-Goog-Resource-* and counting message numbers; none after stop', async () => {
    messages.length = 0;
    const channel = await h.api('POST', '/storage/v2/changes/watch', { id: 'chan-1', type: 'web_hook', address, token: 'tok=1' });
    assert.equal(channel.status, 200);
    assert.equal(channel.body.kind, 'api#channel');
    assert.match(channel.body.resourceUri, /\/storage\/v2\/changes\?/);
    assert.equal(
      (await h.api('POST', '/storage/v2/changes/watch', { id: 'chan-1', type: 'web_hook', address })).body.error.errors[0].reason,
      'channelIdNotUnique',
    );
    await h.api('POST', '/storage/v2/files', { title: 'watched change' });
    await h.server.notifications();
    assert.deepEqual(
      messages.map((m) => m.headers['x-goog-resource-state']),
      ['sync', 'change'],
    );
    assert.deepEqual(
      messages.map((m) => m.headers['x-goog-message-number']),
      ['1', '2'],
    );
    const [sync] = messages;
    assert.equal(sync!.headers['x-goog-channel-id'], 'chan-1');
    assert.equal(sync!.headers['x-goog-channel-token'], 'tok=1');
    assert.equal(sync!.headers['x-goog-resource-id'], channel.body.resourceId);
    assert.ok(sync!.headers['x-goog-channel-expiration']);
    assert.equal(sync!.body, '');
    assert.equal(
      (
        await h.raw('POST', '/storage/v2/channels/stop', JSON.stringify({ id: 'chan-1', resourceId: channel.body.resourceId }), {
          'content-type': 'application/json',
        })
      ).status,
      204,
    );
    await h.api('POST', '/storage/v2/files', { title: 'unwatched' });
    await h.server.notifications();
    assert.equal(messages.length, 2);
    assert.equal((await h.api('POST', '/storage/v2/channels/stop', { id: 'chan-1' })).status, 404);
  });

  it('STO-FILES-WATCH: a watched file sends sync, then update, trash and remove; other files send nothing', async () => {
    messages.length = 0;
    const file = (await h.api('POST', '/storage/v2/files', { title: 'w' })).body;
    const other = (await h.api('POST', '/storage/v2/files', { title: 'o' })).body;
    const channel = await h.api('POST', `/storage/v2/files/${file.id}/watch`, { id: 'file-chan', type: 'web_hook', address });
    assert.match(channel.body.resourceUri, new RegExp(`/storage/v2/files/${file.id}`));
    await h.server.notifications();
    await h.api('PATCH', `/storage/v2/files/${file.id}`, { title: 'w2' });
    await h.server.notifications();
    await h.api('PATCH', `/storage/v2/files/${other.id}`, { title: 'o2' });
    await h.api('POST', `/storage/v2/files/${file.id}/trash`);
    await h.server.notifications();
    await h.raw('DELETE', `/storage/v2/files/${file.id}`);
    await h.server.notifications();
    assert.deepEqual(
      messages.map((m) => m.headers['x-goog-resource-state']),
      ['sync', 'update', 'trash', 'remove'],
    );
    assert.equal((await h.api('POST', `/storage/v2/files/${other.id}/watch`, { id: 'bad', type: 'web_hook', address: 'ftp://x' })).status, 400);
  });
});
