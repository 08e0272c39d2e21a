import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// docs/architecture.md, "Conventions": file and folder names are kebab-case across the repository, so a group or an
// area is found by its name, not by guessing its casing. Names fixed by someone else (README.md, a recorded fixture
// named by its upstream) are not ours to rename: only a lower-case letter or digit followed by a capital is refused.

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('architecture: kebab-case file names', () => {
  it('no tracked file or folder name outside fixtures has a camelCase name', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    assert.ok(tracked.length > 500, `git ls-files lists the repository (${tracked.length} files)`);
    const offending = new Set<string>();
    for (const file of tracked) {
      if (/(^|\/)(fixtures|reporter-fixtures)\//.test(file)) continue;
      for (const part of file.split('/')) if (/[a-z0-9][A-Z]/.test(part)) offending.add(file);
    }
    assert.deepEqual([...offending], []);
  });
});
