import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRegistryServer, type RegistryServer } from '../../devserver/registry/index.js';
import { RegistryClient } from '../../lib/registry/client.js';
import { parseLocation } from '../../lib/registry/location.js';
import { parseManifest } from '../../lib/registry/manifest.js';
import { install, pin } from '../../lib/registry/modules.js';
import { fetchSource } from '../../lib/sources/fetch.js';
import { hashTree } from '../../lib/sources/hash.js';
import { startS3Peer, type S3Peer } from '../peers/s3.js';
import { tarGz, zip } from './archives.js';

/** S3 sources against s3rver on 127.0.0.1 (a real S3 REST peer). */
describe('sources: s3:: fetcher and an S3-backed registry (s3rver)', function () {
  this.timeout(60_000);
  let s3: S3Peer;
  let dir: string;
  const saved: Record<string, string | undefined> = {};

  before(async () => {
    s3 = await startS3Peer();
    dir = await mkdtemp(join(tmpdir(), 'gantry-s3-'));
    await s3.createBucket('modules');
    await s3.putObject(
      'modules',
      'acme/vpc-1.0.0.tgz',
      tarGz([
        { name: 'main.tf', content: 'vpc\n' },
        { name: 'sub/x.tf', content: 'x\n' },
      ]),
    );
    await s3.putObject(
      'modules',
      'acme/vpc-1.0.0.zip',
      await zip([
        { name: 'main.tf', content: 'vpc\n' },
        { name: 'sub/x.tf', content: 'x\n' },
      ]),
    );
    // The default AWS credential chain reads these: the fetcher is given no credentials.
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) saved[name] = process.env[name];
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    process.env.AWS_REGION = s3.region;
  });
  after(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await s3?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('fetches s3:: locations on a custom endpoint (path style) with the default credential chain; tar.gz and zip hash the same', async () => {
    const tgz = await fetchSource(parseLocation(`s3::${s3.endpoint}/modules/acme/vpc-1.0.0.tgz//sub`), { dest: join(dir, 'a') });
    assert.equal(await readFile(join(tgz.path, 'x.tf'), 'utf8'), 'x\n');
    const z = await fetchSource(parseLocation(`s3::${s3.endpoint}/modules/acme/vpc-1.0.0.zip`), { dest: join(dir, 'b'), s3: { checksumsWhenRequired: true } });
    assert.equal(z.hash, tgz.hash);
    assert.equal(await hashTree(join(dir, 'b')), z.hash);
  });

  it('a missing key is a clear error and leaves nothing behind', async () => {
    await assert.rejects(
      fetchSource(parseLocation(`s3::${s3.endpoint}/modules/acme/missing.tgz`), { dest: join(dir, 'c') }),
      /reading s3:\/\/modules\/acme\/missing\.tgz failed: NoSuchKey/,
    );
    await assert.rejects(readFile(join(dir, 'c', 'main.tf')));
  });

  it('REG-EP-DOWNLOAD: an S3-backed registry hands out presigned URLs that pin and install (and no signature lands in the lock)', async () => {
    await s3.putObject('modules', 'registry/acme/bucket/aws/1.0.0.tar.gz', tarGz([{ name: 'main.tf', content: 'bucket 1.0.0\n' }]));
    await s3.putObject('modules', 'registry/acme/bucket/aws/1.1.0.tar.gz', tarGz([{ name: 'main.tf', content: 'bucket 1.1.0\n' }]));
    let server: RegistryServer | undefined;
    const client = new RegistryClient({ env: {} });
    try {
      server = await startRegistryServer({
        s3: { bucket: 'modules', prefix: 'registry', endpoint: s3.endpoint, region: s3.region, credentials: s3.credentials, forcePathStyle: true },
        rescanMs: 0,
      });
      const manifest = parseManifest(JSON.stringify({ bucket: { source: `${server.host}/acme/bucket/aws`, version: '~> 1.0' } }), 'm', {});
      const { lock, modules } = await pin(manifest, { version: 1, modules: {} }, { client });
      assert.equal(modules[0]?.version, '1.1.0');
      const entry = Object.values(lock.modules)[0];
      assert.doesNotMatch(entry?.location ?? '', /X-Amz-Signature|X-Amz-Credential/i);
      const [installed] = await install(manifest, lock, join(dir, 'installed'), { client });
      assert.equal(await readFile(join(installed!.path, 'main.tf'), 'utf8'), 'bucket 1.1.0\n');
    } finally {
      client.close();
      await server?.stop();
    }
  });
});
