import assert from 'node:assert/strict';
import { GetObjectCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Peer, type S3Peer } from './s3.js';

describe('test peer: S3 (s3rver)', function () {
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

  it('answers to its own key pair only: a request signed with another access key id is refused', async () => {
    assert.equal(peer.kind, 's3rver');
    const listed = await peer.client().send(new ListBucketsCommand({}));
    assert.ok(Array.isArray(listed.Buckets));
    const stranger = new S3Client({
      endpoint: peer.endpoint,
      region: peer.region,
      credentials: { accessKeyId: 'NOT-S3RVER', secretAccessKey: peer.credentials.secretAccessKey },
      forcePathStyle: true,
    });
    try {
      await assert.rejects(stranger.send(new ListBucketsCommand({})), { name: 'InvalidAccessKeyId' });
    } finally {
      stranger.destroy();
    }
  });
});
