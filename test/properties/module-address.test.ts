import assert from 'node:assert/strict';
import { formatModuleAddress, moduleAddressKey, parseModuleAddress } from '../../lib/registry/address.js';
import { formatLocation, parseLocation } from '../../lib/registry/location.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

const env = { GANTRY_REGISTRY_HOST: 'registry.example.com' };
const name = fc.stringMatching(/^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,6}[0-9A-Za-z])?$/);
const provider = fc.stringMatching(/^[0-9a-z]{1,8}$/);
const host = fc.constantFrom(
  '',
  'Registry.Example.COM/',
  'reg.example.org:443/',
  'reg.example.org:08443/',
  'bücher.example/',
  'github.com/',
  'a..b/',
  'x.y:0/',
  'x.y:99999/',
);
const subdir = fc.constantFrom('', '//modules/a', '//./a/../b', '//..', '///abs', '//a\\b', '//a//b/');
const nearAddress = fc.tuple(host, name, name, provider, subdir).map(([h, ns, n, p, s]) => `${h}${ns}/${n}/${p}${s}`);
const noisyAddress = fromAlphabet(['a', 'B', '0', '-', '_', '/', '//', '.', ':', '::', '?', 'git::', 'https://', 'ü', ' ', '..'], 16);

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?archive=zip', '?archive=false', '?ref=v1.2.0', '?ref=main&depth=1', '?version=3', '?region=eu-west-1', '?X-Amz-Signature=abc'),
  hex(64).map((h) => `?checksum=sha256:${h}`),
);
const nearLocation = fc
  .tuple(
    fc.constantFrom('', 'git::', 's3::', 'http::', 'HTTPS::', 'hg::'),
    fc.constantFrom(
      'https://example.com/m.tar.gz',
      'https://u:p@example.com/a/b.zip',
      'github.com/org/repo',
      'git@github.com:org/repo.git',
      'https://s3.eu-west-1.amazonaws.com/bucket/key.tgz',
      'https://minio.local:9000/b/k',
      'file:///tmp/m',
      './rel',
      'ftp://x/y',
      'https://example.com/%zz',
      'https://[::1]/x',
    ),
    fc.constantFrom('', '//sub', '//*/inner', '//../up', '//a\\b'),
    query,
  )
  .map(([getter, url, sub, q]) => `${getter}${url}${sub}${q}`);

describe('PROP-ADDRESS: registry module addresses and download locations (REG-SD-NO-HOSTNAME, REG-DL-XGET-SYNTAX, REG-DL-XGET-RELATIVE)', () => {
  it('PROP-ADDRESS: parseModuleAddress answers an address or a GantryError, whatever the text', () => {
    check(
      anyText(fc.oneof(nearAddress, noisyAddress)),
      (text) => {
        const answer = typed(() => parseModuleAddress(text, env));
        if (answer.ok) assert.equal(answer.value.provider, answer.value.provider.toLowerCase());
      },
      800,
    );
  });

  it('PROP-ADDRESS: an address round-trips through its canonical text, and its key through itself (REG-SD-NO-HOSTNAME)', () => {
    check(
      nearAddress,
      (text) => {
        const answer = typed(() => parseModuleAddress(text, env));
        if (!answer.ok) return;
        const canonical = formatModuleAddress(answer.value);
        assert.deepEqual(parseModuleAddress(canonical, env), answer.value);
        assert.equal(formatModuleAddress(canonical), canonical);
        assert.equal(moduleAddressKey(moduleAddressKey(answer.value)), moduleAddressKey(answer.value));
        if (!text.includes('/') || text.split('//')[0]!.split('/').length === 3) assert.equal(answer.value.host, 'registry.example.com');
      },
      600,
    );
  });

  it('PROP-ADDRESS: parseLocation answers a location or a GantryError, whatever the text (REG-DL-XGET-SYNTAX)', () => {
    check(
      fc.tuple(anyText(nearLocation), fc.boolean()),
      ([text, trusted]) => {
        typed(() => parseLocation(text, { trusted, base: 'https://registry.example.com/v1/modules/a/b/c/1.0.0/download', env: {} }));
      },
      800,
    );
  });

  it("PROP-ADDRESS: a location without credentials round-trips through formatLocation (the lock file's text)", () => {
    check(
      nearLocation,
      (text) => {
        const answer = typed(() => parseLocation(text, { base: 'https://registry.example.com/v1/download', env: {} }));
        if (!answer.ok) return;
        const printed = formatLocation(answer.value);
        const again = parseLocation(printed, { env: {} });
        if (/u:p@|Signature/.test(text)) {
          assert.ok(!/u:p@|Signature/.test(printed), printed);
          return;
        }
        assert.deepEqual(again, answer.value, `${text} → ${printed}`);
        assert.equal(formatLocation(again), printed);
      },
      600,
    );
  });
});
