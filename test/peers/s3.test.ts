import assert from 'node:assert/strict';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { startS3Peer, type S3Peer } from './s3.js';

describe('test peer: S3 (moto_server)', function () {
  this.timeout(30000);
  let peer: S3Peer;
  before(async () => {
    peer = await startS3Peer();
  });
  after(async () => {
    await peer?.stop();
  });

  it('stores and returns an object byte for byte over a real socket', async () => {
    await peer.createBucket('peer-check');
    const body = new Uint8Array([0, 1, 2, 250, 251, 252]);
    await peer.putObject('peer-check', 'dir/object.bin', body);
    const got = await peer.client().send(new GetObjectCommand({ Bucket: 'peer-check', Key: 'dir/object.bin' }));
    const bytes = await got.Body!.transformToByteArray();
    assert.deepEqual(Buffer.from(bytes), Buffer.from(body));
    assert.match(peer.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
