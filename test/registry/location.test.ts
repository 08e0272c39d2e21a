import assert from 'node:assert/strict';
import { formatLocation, joinSubdirs, LocationError, parseLocation, parseChecksum } from '../../lib/registry/location.js';

const base = 'https://registry.example.com/v1/modules/acme/vpc/aws/1.2.0/download';

describe('registry: download locations (X-Registry-Get)', () => {
  it('REG-DL-XGET-RELATIVE: values starting with /, ./ and ../ are resolved against the full download URL', () => {
    assert.deepEqual(parseLocation('/archives/vpc-1.2.0.tar.gz', { base }), {
      getter: 'http',
      url: 'https://registry.example.com/archives/vpc-1.2.0.tar.gz',
      archive: 'tar.gz',
      checksum: undefined,
      subdir: '',
    });
    assert.equal((parseLocation('./vpc.zip', { base }) as { url: string }).url, 'https://registry.example.com/v1/modules/acme/vpc/aws/1.2.0/vpc.zip');
    assert.equal((parseLocation('../../x/vpc.tgz//sub', { base }) as { url: string }).url, 'https://registry.example.com/v1/modules/acme/vpc/x/vpc.tgz');
    assert.equal(parseLocation('../../x/vpc.tgz//sub', { base }).subdir, 'sub');
  });

  it('REG-DL-XGET-SYNTAX: forced getters git::, s3::, http::/https:: and the //subdir, ?archive=, ?checksum= forms', () => {
    const git = parseLocation('git::https://example.com/network.git//modules/vpc?ref=v1.2.0&depth=1', { base });
    assert.deepEqual(git, { getter: 'git', url: 'https://example.com/network.git', ref: 'v1.2.0', depth: 1, subdir: 'modules/vpc' });
    assert.equal(formatLocation(git), 'git::https://example.com/network.git//modules/vpc?ref=v1.2.0&depth=1');

    const forcedHttp = parseLocation('https::https://cdn.example.com/get?id=7&archive=tar.xz&checksum=sha256:' + 'ab'.repeat(32), { base });
    assert.deepEqual(forcedHttp, {
      getter: 'http',
      url: 'https://cdn.example.com/get?id=7',
      archive: 'tar.xz',
      checksum: { algorithm: 'sha256', hex: 'ab'.repeat(32) },
      subdir: '',
    });

    assert.equal((parseLocation('https://example.com/a.zip?archive=false', { base }) as { archive: string }).archive, 'none');
    assert.equal((parseLocation('https://example.com/a.tbz2', { base }) as { archive: string }).archive, 'tar.bz2');
    assert.equal((parseLocation('https://example.com/download', { base }) as { archive: unknown }).archive, undefined);
    assert.deepEqual(parseLocation('github.com/acme/net//vpc?ref=v1', { base }), {
      getter: 'git',
      url: 'https://github.com/acme/net',
      ref: 'v1',
      depth: undefined,
      subdir: 'vpc',
    });
    assert.equal(parseLocation('git::git@github.com:acme/net.git?ref=v2', { base }).getter, 'git');
  });

  it('parses s3:: in path style, virtual-hosted style, s3-<region> hosts and custom endpoints', () => {
    assert.deepEqual(parseLocation('s3::https://s3.amazonaws.com/bucket/path/vpc.zip', { base }), {
      getter: 's3',
      bucket: 'bucket',
      key: 'path/vpc.zip',
      region: undefined,
      endpoint: undefined,
      versionId: undefined,
      archive: 'zip',
      checksum: undefined,
      subdir: '',
    });
    const regional = parseLocation('s3::https://s3-eu-west-1.amazonaws.com/bucket/vpc.tgz', { base });
    assert.equal((regional as { region: string }).region, 'eu-west-1');
    const virtual = parseLocation('s3::https://my-bucket.s3.eu-central-1.amazonaws.com/a/vpc.tar.gz//mod?version=abc', { base });
    assert.deepEqual(
      [
        (virtual as { bucket: string }).bucket,
        (virtual as { key: string }).key,
        (virtual as { region: string }).region,
        (virtual as { versionId: string }).versionId,
        virtual.subdir,
      ],
      ['my-bucket', 'a/vpc.tar.gz', 'eu-central-1', 'abc', 'mod'],
    );
    const custom = parseLocation('s3::http://127.0.0.1:9000/modules/vpc.tgz?region=us-west-2', { base });
    assert.deepEqual(
      [(custom as { endpoint: string }).endpoint, (custom as { bucket: string }).bucket, (custom as { region: string }).region],
      ['http://127.0.0.1:9000', 'modules', 'us-west-2'],
    );
  });

  it('joins the location //subdir with the address subdir; //* means the single top folder', () => {
    assert.equal(joinSubdirs('modules', 'vpc'), 'modules/vpc');
    assert.equal(joinSubdirs('*', 'vpc'), '*/vpc');
    assert.equal(joinSubdirs('*', ''), '*');
    assert.equal(joinSubdirs('', 'a/./b'), 'a/b');
    assert.throws(() => joinSubdirs('a', '../../x'), /escapes/);
    assert.equal(parseLocation('https://example.com/a.tgz//*', { base }).subdir, '*');
  });

  it('types bare hex checksums by length and refuses wrong lengths, unknown types and checksum files', () => {
    assert.equal(parseChecksum('d41d8cd98f00b204e9800998ecf8427e').algorithm, 'md5');
    assert.equal(parseChecksum('da39a3ee5e6b4b0d3255bfef95601890afd80709').algorithm, 'sha1');
    assert.equal(parseChecksum('A'.repeat(128)).hex, 'a'.repeat(128));
    assert.throws(() => parseChecksum('abc'), /3 hex digits/);
    assert.throws(() => parseChecksum('sha256:abcd'), /wrong length/);
    assert.throws(() => parseChecksum('crc32:abcd'), /not one of md5/);
    assert.throws(() => parseChecksum('file:https://example.com/SHA256SUMS'), /not supported/);
    assert.throws(() => parseChecksum('z'.repeat(64)), /not hexadecimal/);
  });

  const refused: Array<[string, RegExp]> = [
    ['hg::https://example.com/repo', /unknown getter "hg::"/],
    ['gcs::https://www.googleapis.com/storage/v1/b/k', /unknown getter "gcs::"/],
    ['file:///etc/passwd', /local file/],
    ['ftp://example.com/a.tgz', /scheme Gantry has no getter for/],
    ['git::file:///srv/repo.git', /local repository/],
    ['git::ext::sh -c touch% /tmp/pwned', /unsupported scheme|not a valid URL/],
    ['git::https://example.com/r.git?ref=--upload-pack=touch', /not a valid ref/],
    ['git::https://example.com/r.git?ref=main&depth=0', /not a positive integer/],
    ['http://example.com/a.tgz', /plain http/],
    ['https://user:pass@example.com/a.tgz', /credentials in its URL/],
    ['./relative.tgz', /no download URL/],
    ['some/local/path', /neither a URL nor a known source form/],
    ['https://example.com/a.tgz?archive=rar', /archive type "rar"/],
    ['', /empty/],
  ];
  for (const [value, message] of refused) {
    it(`refuses ${JSON.stringify(value)} with an error naming the value`, () => {
      assert.throws(
        () => parseLocation(value, value.startsWith('./') ? {} : { base }),
        (error: unknown) => error instanceof LocationError && message.test(error.message),
      );
    });
  }

  it('plain http is allowed for loopback hosts and for hosts opted in with GANTRY_REGISTRY_ALLOW_HTTP', () => {
    assert.equal(parseLocation('http://127.0.0.1:8080/a.tgz', { base }).getter, 'http');
    assert.equal(parseLocation('http://[::1]:8080/a.tgz', { base }).getter, 'http');
    assert.equal(parseLocation('http://mirror.internal/a.tgz', { base, env: { GANTRY_REGISTRY_ALLOW_HTTP: 'other.example, mirror.internal' } }).getter, 'http');
  });

  it('formatLocation drops signing parameters of presigned URLs so the lock file holds no credentials', () => {
    const signed = parseLocation(
      'https://bucket.s3.amazonaws.com/vpc.tgz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20250101&X-Amz-Signature=deadbeef&X-Amz-Security-Token=tok',
      { base },
    );
    const text = formatLocation(signed);
    assert.doesNotMatch(text, /deadbeef|AKIA|tok\b/);
    assert.match(text, /^https:\/\/bucket\.s3\.amazonaws\.com\/vpc\.tgz/);
  });

  it('REG-DL-XGET-SYNTAX: an s3 location whose path is not valid percent-encoding is a LocationError, not a URIError (found by PROP-ADDRESS)', () => {
    assert.throws(
      () => parseLocation('s3::https://example.com/%zz?archive=zip', { base }),
      (error: unknown) => error instanceof LocationError && /not valid percent-encoded/.test(error.message),
    );
  });
});
