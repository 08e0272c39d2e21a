/**
 * The interpretation of remote answers, as pure functions over (status, body text). The same paths run against
 * chromedriver in webdriver.test.ts; here every row of the W3C error table is fed through them, which no single
 * real driver can produce.
 */
import assert from 'node:assert/strict';
import {
  WebDriverError,
  codeForLegacyStatus,
  interpretAnswer,
  parseNewSession,
  webDriverErrorCodes,
  webDriverErrorStatus,
} from '../../lib/automation/index.js';
import { ProtocolError } from '../../lib/http/index.js';

const context = { method: 'POST', path: '/session/abc/url' };

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return assert.fail('expected an error');
}

describe('automation: protocol errors typed by their W3C code', () => {
  it('AUT-ERR-BODY: every code of the W3C error table, in its error body, becomes a WebDriverError with that code and the status', () => {
    assert.equal(webDriverErrorCodes.length, 28);
    for (const code of webDriverErrorCodes) {
      const status = webDriverErrorStatus[code];
      const body = JSON.stringify({ value: { error: code, message: `${code} happened`, stacktrace: 'trace', data: { text: 'x' } } });
      const error = thrown(() => interpretAnswer({ status, text: body }, context));
      assert.ok(error instanceof WebDriverError, code);
      assert.equal(error.code, code);
      assert.equal(error.status, status);
      assert.equal(error.expectedStatus, status);
      assert.equal(error.remoteMessage, `${code} happened`);
      assert.equal(error.stacktrace, 'trace');
      assert.deepEqual(error.data, { text: 'x' });
      assert.equal(error.exitCode, 3);
    }
  });

  it('AUT-ERR-UNKNOWN-METHOD: `unknown method` is 405 in the table and keeps its code even when a driver sends another status', () => {
    assert.equal(webDriverErrorStatus['unknown method'], 405);
    assert.equal(webDriverErrorStatus['unknown command'], 404);
    assert.equal(webDriverErrorStatus['invalid session id'], 404);
    assert.equal(webDriverErrorStatus['invalid argument'], 400);
    assert.equal(webDriverErrorStatus['session not created'], 500);
    const error = thrown(() =>
      interpretAnswer({ status: 404, text: JSON.stringify({ value: { error: 'unknown method', message: '', stacktrace: '' } }) }, context),
    );
    assert.ok(error instanceof WebDriverError);
    assert.equal(error.code, 'unknown method');
    assert.equal(error.status, 404);
    assert.equal(error.expectedStatus, 405);
  });

  it('an error code outside the table is `unknown error`, with the code as sent kept', () => {
    const error = thrown(() =>
      interpretAnswer({ status: 500, text: JSON.stringify({ value: { error: 'flux capacitor', message: 'm', stacktrace: '' } }) }, context),
    );
    assert.ok(error instanceof WebDriverError);
    assert.equal(error.code, 'unknown error');
    assert.equal(error.reportedCode, 'flux capacitor');
  });

  it('an error status without an error body is classified by status: 404 unknown command, 405 unknown method, else unknown error', () => {
    const plain404 = thrown(() => interpretAnswer({ status: 404, text: 'unknown command: session/abc/nope' }, context));
    assert.ok(plain404 instanceof WebDriverError);
    assert.equal(plain404.code, 'unknown command');
    assert.match(plain404.message, /unknown command: session\/abc\/nope/);
    const bare405 = thrown(() => interpretAnswer({ status: 405, text: '' }, context));
    assert.ok(bare405 instanceof WebDriverError);
    assert.equal(bare405.code, 'unknown method');
    const proxy502 = thrown(() => interpretAnswer({ status: 502, text: '<html>Bad Gateway</html>' }, context));
    assert.ok(proxy502 instanceof WebDriverError);
    assert.equal(proxy502.code, 'unknown error');
    assert.match(proxy502.remoteMessage, /Bad Gateway/);
  });

  it('legacy numeric statuses map to W3C codes; unknown numbers fall back to the code the message starts with', () => {
    assert.equal(codeForLegacyStatus(6, ''), 'invalid session id');
    assert.equal(codeForLegacyStatus(61, ''), 'invalid argument');
    assert.equal(codeForLegacyStatus(33, ''), 'session not created');
    assert.equal(codeForLegacyStatus(999, 'no such element: gone'), 'no such element');
    assert.equal(codeForLegacyStatus(999, 'something odd'), 'unknown error');
    const error = thrown(() =>
      interpretAnswer({ status: 200, text: JSON.stringify({ sessionId: 'abc', status: 61, value: { message: 'invalid argument: bad' } }) }, context),
    );
    assert.ok(error instanceof WebDriverError);
    assert.equal(error.code, 'invalid argument');
  });

  it('a success body that is not JSON, or JSON that is not an object, is a ProtocolError', () => {
    assert.ok(thrown(() => interpretAnswer({ status: 200, text: '<html>' }, context)) instanceof ProtocolError);
    assert.ok(thrown(() => interpretAnswer({ status: 200, text: '[1,2]' }, context)) instanceof ProtocolError);
  });

  it('AUT-NEW-SESSION-RESPONSE: both new-session shapes are read; a response without a session id is refused', () => {
    const create = { method: 'POST', path: '/session' };
    assert.deepEqual(parseNewSession({ status: 200, text: JSON.stringify({ value: { sessionId: 's1', capabilities: { browserName: 'b' } } }) }, create), {
      sessionId: 's1',
      capabilities: { browserName: 'b' },
      shape: 'w3c',
    });
    assert.deepEqual(parseNewSession({ status: 200, text: JSON.stringify({ sessionId: 's2', value: { browserName: 'b' } }) }, create), {
      sessionId: 's2',
      capabilities: { browserName: 'b' },
      shape: 'legacy',
    });
    assert.ok(thrown(() => parseNewSession({ status: 200, text: JSON.stringify({ value: { capabilities: {} } }) }, create)) instanceof ProtocolError);
    assert.ok(thrown(() => parseNewSession({ status: 200, text: JSON.stringify({ sessionId: '', value: {} }) }, create)) instanceof ProtocolError);
  });

  it('AUT-EP-END-SESSION: the end-session answers {} , {value: null} and an empty body all read as success', () => {
    const end = { method: 'DELETE', path: '/session/abc' };
    assert.deepEqual(interpretAnswer({ status: 200, text: '{}' }, end), {});
    assert.deepEqual(interpretAnswer({ status: 200, text: '{"value":null}' }, end), { value: null });
    assert.deepEqual(interpretAnswer({ status: 200, text: '' }, end), {});
  });
});
