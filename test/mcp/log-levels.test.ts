import assert from 'node:assert/strict';
import { createLogLevels, DEFAULT_CLIENT_LOG_LEVEL, heard } from '../../lib/mcp/server/log-levels.js';

describe('mcp serve: log levels by caller (logging/setLevel on a stateless server)', () => {
  it('a caller hears its own level and the default otherwise; the caller not heard from longest is forgotten first', () => {
    const levels = createLogLevels(2);
    assert.equal(levels.get('a'), DEFAULT_CLIENT_LOG_LEVEL);
    levels.set('a', 'error');
    levels.set('b', 'debug');
    assert.equal(levels.get('a'), 'error');
    levels.set('a', 'warning'); // a is now the most recent
    levels.set('c', 'notice'); // over capacity: b goes
    assert.equal(levels.get('b'), DEFAULT_CLIENT_LOG_LEVEL);
    assert.equal(levels.get('a'), 'warning');
    assert.equal(levels.get('c'), 'notice');
  });

  it('a message is heard at its level and above, in RFC 5424 order', () => {
    assert.equal(heard('info', 'info'), true);
    assert.equal(heard('debug', 'info'), false);
    assert.equal(heard('notice', 'info'), true);
    assert.equal(heard('warning', 'error'), false);
    assert.equal(heard('emergency', 'alert'), true);
    assert.equal(heard('critical', 'emergency'), false);
  });
});
