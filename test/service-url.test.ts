import assert from 'node:assert/strict';
import { ExitCode, UsageError } from '../lib/errors.js';
import { isHttpsOrLoopback, isLoopbackHost } from '../lib/loopback.js';
import { parseServiceUrl } from '../lib/service-url.js';
import { storageBaseUrl } from '../lib/storage/transport.js';
import { checkNotifyAddress } from '../lib/cli/commands/storage/input.js';

const refused = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof UsageError && e.exitCode === ExitCode.usage && pattern.test(e.message));

describe('service URLs: one rule for "https, or http on loopback"', () => {
  it('LAYER-SETTINGS: loopback is localhost, *.localhost, 127.0.0.0/8 and ::1 — for every check', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', 'localhost', 'app.localhost', '[::1]', '::1', 'LOCALHOST']) assert.ok(isLoopbackHost(host), host);
    for (const host of ['128.0.0.1', 'example.com', 'localhost.example.com', '[::2]', '0.0.0.0']) assert.ok(!isLoopbackHost(host), host);
    assert.ok(isHttpsOrLoopback(new URL('https://example.com')));
    assert.ok(isHttpsOrLoopback(new URL('http://[::1]:8080')));
    assert.ok(!isHttpsOrLoopback(new URL('http://example.com')));
    assert.ok(!isHttpsOrLoopback(new URL('ftp://127.0.0.1')));
    // The storage base URL and the notification address follow the same rule (they used to leave out ::1 or 127.0.0.2).
    assert.equal(storageBaseUrl('http://[::1]:9/storage/v2'), 'http://[::1]:9');
    assert.equal(storageBaseUrl('http://127.0.0.2:9/'), 'http://127.0.0.2:9');
    assert.equal(checkNotifyAddress('http://127.0.0.2:8765/hook?x=1'), 'http://127.0.0.2:8765/hook?x=1');
    refused(
      () => storageBaseUrl('http://storage.example.com'),
      /^the storage base URL must be https \(http only on loopback.*got http:\/\/storage\.example\.com$/,
    );
    refused(() => checkNotifyAddress('http://example.com/hook'), /^--address must be https/);
  });

  it('LAYER-SETTINGS: one "is not a URL" check, never showing a password', () => {
    refused(() => parseServiceUrl('nope', { name: 'the X base URL' }), /^the X base URL "nope" is not a URL$/);
    refused(() => parseServiceUrl('nope', { name: 'X_URL', showValue: false }), /^X_URL is not a URL$/);
    refused(() => parseServiceUrl('ftp://127.0.0.1', { name: 'X', plainHttp: 'anywhere' }), /^X must be http\(s\), got ftp:$/);
    assert.throws(
      () => parseServiceUrl('https://user:hunter2secret@x.example', { name: 'X' }),
      (e: unknown) => e instanceof UsageError && /no user or password/.test(e.message) && !e.message.includes('hunter2secret'),
    );
    refused(() => parseServiceUrl('https://x.example/?a=1', { name: 'X' }), /^X must have no query or fragment/);
    assert.equal(parseServiceUrl('http://x.example/api', { name: 'X', plainHttp: 'anywhere' }).href, 'http://x.example/api');
    assert.equal(parseServiceUrl('https://x.example/?a=1', { name: 'X', query: true }).search, '?a=1');
    const coded = (() => {
      try {
        parseServiceUrl('::', { name: 'X', code: 'INVALID_ARGUMENT' });
      } catch (e) {
        return e as UsageError;
      }
      return undefined;
    })();
    assert.equal(coded?.code, 'INVALID_ARGUMENT');
  });
});
