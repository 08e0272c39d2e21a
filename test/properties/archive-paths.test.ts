import assert from 'node:assert/strict';
import { SourceRefusedError } from '../../lib/sources/limits.js';
import { safeRelativePath } from '../../lib/sources/tree-writer.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

const nearEntry = fromAlphabet(['a', 'b.tf', '/', '.', '..', './', '../', '\\', 'C:', '\0', ' ', 'é', '//'], 12);

describe('PROP-ARCHIVE-PATHS: archive entry names cleaned into paths inside the tree', () => {
  it('PROP-ARCHIVE-PATHS: safeRelativePath refuses with a SourceRefusedError or answers a relative path with no "..", "." or empty segment', () => {
    check(
      anyText(nearEntry),
      (name) => {
        const answer = typed(() => safeRelativePath(name));
        if (!answer.ok) return assert.ok(answer.error instanceof SourceRefusedError, answer.error.constructor.name);
        const path = answer.value;
        assert.ok(!path.startsWith('/') && !path.includes('\\') && !path.includes('\0'));
        if (path !== '') for (const segment of path.split('/')) assert.ok(!['', '.', '..'].includes(segment), path);
        assert.equal(safeRelativePath(path), path, 'cleaning is idempotent');
      },
      1000,
    );
  });

  it('PROP-ARCHIVE-PATHS: a name with a ".." segment anywhere is refused, never resolved inside the tree', () => {
    check(
      fc.tuple(fc.array(fc.constantFrom('a', 'b', '.', ''), { maxLength: 3 }), fc.array(fc.constantFrom('a', 'b', '.', '', '..'), { maxLength: 3 })),
      ([before, after]) => {
        const name = [...before, '..', ...after].join('/');
        assert.ok(!typed(() => safeRelativePath(name)).ok, name);
      },
    );
  });
});
