import assert from 'node:assert/strict';
import { AddressError, formatModuleAddress, normaliseHost, parseModuleAddress } from '../../lib/registry/address.js';

describe('registry: module source addresses', () => {
  const env = {};

  it('REG-SD-NO-HOSTNAME: an address with no host is on the public registry, or on GANTRY_REGISTRY_HOST', () => {
    assert.deepEqual(parseModuleAddress('hashicorp/consul/aws', env), {
      host: 'registry.terraform.io',
      namespace: 'hashicorp',
      name: 'consul',
      provider: 'aws',
      subdir: '',
    });
    assert.equal(parseModuleAddress('hashicorp/consul/aws', { GANTRY_REGISTRY_HOST: 'Registry.Example.COM:0443' }).host, 'registry.example.com');
  });

  it('parses host, namespace, name, provider and //subdir; keeps the case of namespace and name', () => {
    const address = parseModuleAddress('app.terraform.io/Example-Corp/Net_Work/azurerm//modules/./vnet/', env);
    assert.deepEqual(address, { host: 'app.terraform.io', namespace: 'Example-Corp', name: 'Net_Work', provider: 'azurerm', subdir: 'modules/vnet' });
    assert.equal(formatModuleAddress(address), 'app.terraform.io/Example-Corp/Net_Work/azurerm//modules/vnet');
  });

  it('normalises hosts as Terraform: lower case, IDNA to punycode, :443 dropped, leading zeros of the port dropped', () => {
    assert.equal(normaliseHost('Registry.Example.COM'), 'registry.example.com');
    assert.equal(normaliseHost('bücher.example'), 'xn--bcher-kva.example');
    assert.equal(normaliseHost('BÜCHER.example:443'), 'xn--bcher-kva.example');
    assert.equal(normaliseHost('example.com:08080'), 'example.com:8080');
    assert.equal(normaliseHost('127.0.0.1:5000'), '127.0.0.1:5000');
    assert.equal(parseModuleAddress('bücher.example:0443/a/b/c', env).host, 'xn--bcher-kva.example');
  });

  const badHosts: Array<[string, RegExp]> = [
    ['example.com:65536', /outside 1-65535/],
    ['example.com:0', /outside 1-65535/],
    ['example.com:http', /not a number/],
    ['localhost', /no dot/],
    ['exa mple.com', /not a valid hostname|invalid label/],
    ['a..b.com', /empty label/],
    ['.example.com', /empty label/],
    ['-bad.example.com', /invalid label "-bad"/],
    ['under_score.example.com', /invalid label/],
    ['https://example.com', /is a URL/],
    ['', /empty/],
  ];
  for (const [host, message] of badHosts) {
    it(`refuses the malformed host ${JSON.stringify(host)} with an error naming the host`, () => {
      assert.throws(
        () => normaliseHost(host),
        (error: unknown) => error instanceof AddressError && message.test(error.message) && error.exitCode === 2,
      );
    });
  }

  const badAddresses: Array<[string, RegExp]> = [
    ['hashicorp/consul', /has 2 parts/],
    ['a/b/c/d/e', /has 5 parts/],
    ['-bad/consul/aws', /namespace "-bad"/],
    ['hashicorp/consul-/aws', /module name "consul-"/],
    ['hashicorp/consul/AWS', /provider "AWS"/],
    ['hashicorp/consul/aws-x', /provider "aws-x"/],
    [`${'n'.repeat(65)}/consul/aws`, /namespace/],
    ['github.com/hashicorp/consul/aws', /github.com is not a module registry/],
    ['bitbucket.org/a/b/c', /bitbucket.org is not a module registry/],
    ['hashicorp/consul/aws//../../etc', /escapes the module package/],
    ['hashicorp/consul/aws?ref=1', /query string/],
    ['git::https://example.com/x.git', /download location/],
    ['https://example.com/a/b/c', /download location/],
    ['bad_host.example.com/a/b/c', /invalid label/],
    ['', /empty/],
  ];
  for (const [source, message] of badAddresses) {
    it(`refuses the malformed address ${JSON.stringify(source)}, naming the wrong part`, () => {
      assert.throws(
        () => parseModuleAddress(source, env),
        (error: unknown) => error instanceof AddressError && message.test(error.message),
      );
    });
  }

  it('a github.com address gets a hint to use a git source', () => {
    assert.throws(
      () => parseModuleAddress('github.com/a/b/c', env),
      (error: unknown) => /git::https:\/\/github.com/.test((error as AddressError).hint ?? ''),
    );
  });
});
