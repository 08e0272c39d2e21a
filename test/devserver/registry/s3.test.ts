// The registry's S3 mode against a real S3 peer (s3rver on 127.0.0.1).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { create as createTar } from 'tar';
import yazl from 'yazl';
import { CatalogError, parseS3Url, startRegistryServer, type RegistryServer } from '../../../devserver/registry/index.js';
import { startS3Peer, type S3Peer } from '../../peers/s3.js';
import { get, tempDir } from './helpers.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('devserver/registry: S3 store (s3rver)', function () {
  this.timeout(60000); // generous: the S3 peer is a separate process, and the machine may be busy
  let peer: S3Peer;
  let server: RegistryServer;
  const bucket = 'registry-modules';
  const tgz = Buffer.from('not really gzip, but bytes the registry must pass through untouched \x00\x01\x02');
  let zip: Buffer;
  let realTgz: Buffer;

  before(async () => {
    const zipFile = new yazl.ZipFile();
    zipFile.addBuffer(Buffer.from('variable "cluster_size" {\n  description = "Nodes"\n  default     = 3\n}\n'), 'main.tf');
    zipFile.addBuffer(Buffer.from('# vault\n'), 'README.md');
    zipFile.end();
    zip = await buffer(zipFile.outputStream);
    const source = await tempDir('s3src');
    await writeFile(path.join(source.dir, 'main.tf'), 'output "address" {\n  description = "Where Vault listens"\n  value       = "x"\n}\n');
    realTgz = await buffer(createTar({ gzip: true, cwd: source.dir }, ['main.tf']) as unknown as NodeJS.ReadableStream);
    await source.remove();
    peer = await startS3Peer();
    await peer.createBucket(bucket);
    await peer.putObject(bucket, 'prod/modules/acme/vault/aws/1.1.0.tar.gz', realTgz);
    await peer.putObject(bucket, 'prod/modules/acme/vault/aws/1.0.0.tar.gz', tgz);
    await peer.putObject(bucket, 'prod/modules/acme/vault/aws/1.2.0.zip', zip);
    await peer.putObject(bucket, 'prod/modules/acme/vault/aws/module.json', JSON.stringify({ description: 'Vault on EC2', verified: true, owner: 'acme' }));
    await peer.putObject(bucket, 'prod/modules/acme/vault/aws/readme.txt', 'ignored');
    await peer.putObject(bucket, 'prod/modules/acme/consul/google/0.1.0.tgz', tgz);
    await peer.putObject(bucket, 'elsewhere/acme/hidden/aws/1.0.0.tar.gz', tgz);
    server = await startRegistryServer({
      s3: { bucket, prefix: 'prod/modules', endpoint: peer.endpoint, region: peer.region, credentials: peer.credentials },
    });
  });
  after(async () => {
    await server?.stop();
    await peer?.stop();
  });

  it('REG-EP-LIST-MODULES: modules are the <prefix>/<namespace>/<name>/<provider>/<version>.<archive> objects, with module.json metadata', async () => {
    const { body } = await get(`${server.url}/v1/modules`);
    assert.deepEqual(
      body.modules.map((m: { id: string }) => m.id),
      ['acme/consul/google/0.1.0', 'acme/vault/aws/1.2.0'],
    );
    const vault = body.modules[1];
    assert.equal(vault.description, 'Vault on EC2');
    assert.equal(vault.verified, true);
    assert.equal(server.source, `s3://${bucket}/prod/modules`);
  });

  it('REG-EP-LIST-VERSIONS: versions come from the object names, newest first', async () => {
    const { body } = await get(`${server.url}/v1/modules/acme/vault/aws/versions`);
    assert.deepEqual(
      body.modules[0].versions.map((v: { version: string }) => v.version),
      ['1.2.0', '1.1.0', '1.0.0'],
    );
  });

  it('REG-EP-DOWNLOAD: X-Registry-Get is a presigned GET URL that returns the object byte for byte', async () => {
    for (const [version, bytes] of [
      ['1.0.0', tgz],
      ['1.2.0', zip],
    ] as const) {
      const response = await fetch(`${server.url}/v1/modules/acme/vault/aws/${version}/download`);
      assert.equal(response.status, 204);
      const location = new URL(response.headers.get('x-registry-get')!);
      assert.equal(location.origin, peer.endpoint);
      assert.ok(location.pathname.startsWith(`/${bucket}/prod/modules/acme/vault/aws/${version}.`), location.pathname);
      assert.equal(location.searchParams.get('X-Amz-Expires'), '900');
      const object = await fetch(location);
      assert.equal(object.status, 200);
      assert.equal(sha256(new Uint8Array(await object.arrayBuffer())), sha256(bytes));
      // s3rver refuses a presigned URL whose access key id it does not know, or that has expired, so the 200 above
      // shows the URL was signed for this peer's key and is still valid (the control below shows the refusal is real).
      // It does not recompute SigV4 signatures, so the signing itself is checked by shape: SigV4 query auth for this key.
      assert.equal(location.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
      assert.ok(location.searchParams.get('X-Amz-Credential')?.startsWith(`${peer.credentials.accessKeyId}/`));
      assert.match(location.searchParams.get('X-Amz-Signature') ?? '', /^[0-9a-f]{64}$/);
      const unknownKey = new URL(location);
      unknownKey.searchParams.set('X-Amz-Credential', location.searchParams.get('X-Amz-Credential')!.replace(/^[^/]+/, 'UNKNOWNKEY'));
      const refused = await fetch(unknownKey);
      assert.equal(refused.status, 403);
      assert.match(await refused.text(), /<Code>InvalidAccessKeyId<\/Code>/);
    }
  });

  it("REG-DL-XGET-SYNTAX: locations: 's3' answers s3:: addresses for the client's S3 getter", async () => {
    const getter = await startRegistryServer({
      s3: { bucket, prefix: 'prod/modules', endpoint: peer.endpoint, credentials: peer.credentials, locations: 's3' },
    });
    try {
      const response = await fetch(`${getter.url}/v1/modules/acme/consul/google/0.1.0/download`);
      assert.equal(response.headers.get('x-registry-get'), `s3::${peer.endpoint}/${bucket}/prod/modules/acme/consul/google/0.1.0.tgz`);
    } finally {
      await getter.stop();
    }
  });

  it('REG-DETAIL-ROOT, REG-CONTENT-TRIMMED: content of S3 archives is read (tar.gz streamed, zip buffered); an unreadable one is trimmed', async () => {
    const tarDetail = await get(`${server.url}/v1/modules/acme/vault/aws/1.1.0`);
    assert.deepEqual(tarDetail.body.root.outputs, [{ name: 'address', description: 'Where Vault listens' }]);
    const zipDetail = await get(`${server.url}/v1/modules/acme/vault/aws/1.2.0`);
    assert.deepEqual(
      zipDetail.body.root.inputs.map((i: { name: string; default: string }) => [i.name, i.default]),
      [['cluster_size', '3']],
    );
    assert.equal(zipDetail.body.root.readme, '# vault\n');
    const broken = await get(`${server.url}/v1/modules/acme/vault/aws/1.0.0`);
    assert.deepEqual(broken.body.root, { path: '', empty: false });
    assert.deepEqual(broken.body.providers, ['aws']);
  });

  it('a bad module.json in the bucket or a missing bucket stops the start with a clear error', async () => {
    await peer.putObject(bucket, 'broken/acme/x/aws/module.json', '{"verified": "yes"}');
    await peer.putObject(bucket, 'broken/acme/x/aws/1.0.0.tar.gz', tgz);
    const common = { endpoint: peer.endpoint, credentials: peer.credentials };
    await assert.rejects(startRegistryServer({ s3: { bucket, prefix: 'broken', ...common } }), (error: Error) => {
      assert.ok(error instanceof CatalogError);
      assert.match(error.message, /s3:\/\/registry-modules\/broken\/acme\/x\/aws\/module\.json: "verified" must be a boolean/);
      return true;
    });
    await assert.rejects(startRegistryServer({ s3: { bucket: 'no-such-bucket', ...common } }), /cannot list s3:\/\/no-such-bucket: NoSuchBucket/);
  });

  it('parseS3Url: s3://bucket/prefix, refusing invalid buckets and dot segments', () => {
    assert.deepEqual(parseS3Url('s3://my-bucket/a/b/'), { bucket: 'my-bucket', prefix: 'a/b' });
    assert.deepEqual(parseS3Url('s3://my-bucket'), { bucket: 'my-bucket', prefix: '' });
    for (const bad of ['https://my-bucket/x', 's3://My_Bucket', 's3://ab', 's3://bucket/../x']) assert.throws(() => parseS3Url(bad), CatalogError, bad);
  });
});
