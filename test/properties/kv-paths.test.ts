import assert from 'node:assert/strict';
import { SecretsPathError } from '../../lib/secrets/errors.js';
import { encodePath, normaliseMount, pathSegments } from '../../lib/secrets/paths.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

const nearPath = fromAlphabet(['a', 'db', '/', '//', '.', '..', 'x.', ' ', '%', '%2F', '?', '#', 'é', '\u0000', '\u007f', '+', '&'], 10);
const segment = fc
  .string({ minLength: 1, maxLength: 8 })
  .filter((s) => !s.includes('/') && s !== '.' && s !== '..' && !s.endsWith('.') && ![...s].some((c) => c < ' ' || c === '\u007f'));

describe('PROP-KV-PATHS: secret paths and mounts checked and encoded before anything is sent (SEC-PATH-TRAILING-PERIOD)', () => {
  it('PROP-KV-PATHS: pathSegments, encodePath and normaliseMount answer or refuse with a SecretsPathError, whatever the text', () => {
    check(
      fc.tuple(anyText(nearPath), fc.boolean()),
      ([path, directory]) => {
        for (const run of [(): unknown => pathSegments(path, { directory }), () => encodePath(path, { directory }), () => normaliseMount(path)]) {
          const answer = typed(run);
          if (!answer.ok) assert.ok(answer.error instanceof SecretsPathError, answer.error.constructor.name);
        }
      },
      800,
    );
  });

  it('PROP-KV-PATHS: no segment it accepts is empty, relative, ends in a period (SEC-PATH-TRAILING-PERIOD) or holds a control character', () => {
    check(
      anyText(nearPath),
      (path) => {
        const answer = typed(() => pathSegments(path, { directory: true }));
        if (!answer.ok) return;
        for (const s of answer.value)
          assert.ok(s !== '' && s !== '.' && s !== '..' && !s.endsWith('.') && ![...s].some((c) => c < ' ' || c === '\u007f'), JSON.stringify(s));
      },
      600,
    );
  });

  it('PROP-KV-PATHS: the encoded path decodes, segment by segment, to the path given; a mount is normalised once and for all', () => {
    check(fc.tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean()), ([segments, leading, directory]) => {
      const path = `${leading ? '/' : ''}${segments.join('/')}${directory ? '/' : ''}`;
      const encoded = encodePath(path, { directory });
      assert.deepEqual(encoded.replace(/\/$/, '').split('/').map(decodeURIComponent), segments);
      assert.equal(encoded.endsWith('/'), directory);
      const mount = normaliseMount(path);
      assert.equal(normaliseMount(mount), mount);
    });
  });
});
