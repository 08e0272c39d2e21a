// The one escaping of text for the terminal (lib/terminal-text.ts), and the places every line passes through it: the
// command's output (lines, notes, tables, json), the logger, `shown` in messages and the gate table.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createOutput } from '../lib/cli/output.js';
import { renderGateTable } from '../lib/analysis/report.js';
import { renderBrowserCheck } from '../lib/automation/check.js';
import { shown } from '../lib/errors.js';
import { createLogger } from '../lib/log.js';
import { terminalText } from '../lib/terminal-text.js';

/** Every character a terminal acts on, or that hides or reorders text. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/;
const HOSTILE = 'evil\u001b]0;pwned\u0007\u001b[2J\u001b[31mRED';

describe('terminal-text: text from a server as the terminal shows it', () => {
  it('TERM-REMOTE-TEXT: every C0 control, DEL and every C1 control becomes its JSON escape; a line break too unless kept', () => {
    for (let code = 0; code < 0x20; code += 1) {
      const char = String.fromCharCode(code);
      const escaped = terminalText(`a${char}b`);
      assert.equal(escaped, `a${JSON.stringify(char).slice(1, -1)}b`, `U+${code.toString(16)}`);
      assert.equal(terminalText(`a${char}b`, { lineBreaks: 'keep' }), code === 0x0a ? 'a\nb' : escaped);
    }
    for (let code = 0x7f; code <= 0x9f; code += 1) {
      assert.equal(terminalText(String.fromCharCode(code)), `\\u00${code.toString(16)}`);
    }
    assert.equal(terminalText(HOSTILE), 'evil\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mRED');
    assert.equal(terminalText('a\r\nb'), 'a\\r\\nb');
    assert.equal(terminalText('a\r\nb', { lineBreaks: 'keep' }), 'a\\r\nb');
  });

  it('TERM-REMOTE-TEXT: bidi embeddings, overrides and isolates, zero-width characters, line separators and the BOM are escaped', () => {
    const hidden = [
      0x061c, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2060, 0x2066, 0x2067, 0x2068, 0x2069, 0xfeff,
    ];
    for (const code of hidden) {
      const hex = code.toString(16).padStart(4, '0');
      assert.equal(terminalText(`x${String.fromCharCode(code)}y`), `x\\u${hex}y`, `U+${hex}`);
      assert.equal(terminalText(`x${String.fromCharCode(code)}y`, { lineBreaks: 'keep' }), `x\\u${hex}y`, `U+${hex} kept`);
    }
    assert.equal(terminalText('invoice\u202efdp.exe'), 'invoice\\u202efdp.exe');
  });

  it('TERM-REMOTE-TEXT: printable text is unchanged, whatever its script: accents, CJK, emoji, quotes, backslashes, box drawing', () => {
    const printable = [
      'plain ASCII ~!@#$%^&*()_+{}|:"<>?`-=[]\\;\',./',
      'Grüße, façade, ñandú',
      '日本語のテキスト',
      'العربية',
      'emoji 😀🚀',
      '┌─┐│└┘ ▀▄█',
      '\u00a0non-breaking\u00a0space',
      'tab-free',
    ];
    for (const text of printable) {
      assert.equal(terminalText(text), text);
      assert.equal(terminalText(text, { lineBreaks: 'keep' }), text);
      assert.ok(!UNSAFE.test(terminalText(text)));
    }
    // Every code point below U+3000 either stays as it is or comes out as printable ASCII escapes.
    for (let code = 0; code < 0x3000; code += 1) {
      const out = terminalText(String.fromCharCode(code));
      assert.ok(!UNSAFE.test(out), `U+${code.toString(16)} leaves nothing a terminal acts on`);
      if (out !== String.fromCharCode(code)) assert.match(out, /^\\(?:[btnfr]|u[0-9a-f]{4})$/);
    }
  });

  it('TERM-REMOTE-TEXT: shown() quotes a value holding any of them, as JSON would, bidi controls included', () => {
    assert.equal(shown('secret/app/d\nb'), '"secret/app/d\\nb"');
    assert.equal(shown('say "hi"\u001b[2J'), '"say \\"hi\\"\\u001b[2J"');
    assert.equal(shown('rtl\u202e'), '"rtl\\u202e"');
    assert.equal(shown('plain "quoted" \\ path'), 'plain "quoted" \\ path');
  });

  it("TERM-REMOTE-TEXT: the command's output — a table row stays one line, a line keeps its own line breaks only, json stays the same document, raw stays byte-exact", () => {
    let stdout = '';
    let stderr = '';
    const sink = (append: (text: string) => void) =>
      Object.assign(
        new Writable({
          write(chunk, _encoding, callback) {
            append(String(chunk));
            callback();
          },
        }),
        { isTTY: true, columns: 200 },
      );
    const out = createOutput({ stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)) });
    out.table(
      [{ title: `${HOSTILE}\nsecond line`, size: 3 }],
      [
        { header: 'title', value: (r) => r.title },
        { header: 'size', value: (r) => r.size },
      ],
    );
    const rows = stdout.split('\n').filter(Boolean);
    assert.equal(rows.length, 2, stdout);
    assert.match(rows[1]!, /^evil\\u001b\]0;pwned\\u0007\\u001b\[2J\\u001b\[31mRED\\nsecond line {2}3$/);
    stdout = '';
    out.line(`first\n${HOSTILE}\u202e`);
    assert.equal(stdout, 'first\nevil\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mRED\\u202e\n');
    stdout = '';
    const value = { title: `${HOSTILE}\u0085\u202e\u007f`, n: 1 };
    out.json(value);
    assert.ok(!UNSAFE.test(stdout.replace(/\n/g, '')), stdout);
    assert.deepEqual(JSON.parse(stdout), value, 'the same document');
    stdout = '';
    out.raw!(HOSTILE);
    assert.equal(stdout, `${HOSTILE}\n`, 'raw is byte-exact (a secret value for a pipe)');
    out.note(`note ${HOSTILE}`);
    const bar = out.progress(`get ${HOSTILE}\nx`, 10);
    bar.done('done');
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    assert.ok(!/\u0007|\u001b\]|\u001b\[2J|\u001b\[31m/.test(stderr), stderr);
    assert.match(stderr, /note evil\\u001b\]0;pwned/);
    assert.match(stderr, /get evil\\u001b\]0;pwned\\u0007\\u001b\[2J\\u001b\[31mRED\\nx done\n/);
  });

  it('TERM-REMOTE-TEXT: a log line is one line, whatever a payload put in it', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
    logger.info(`delivery ${HOSTILE}\n2026-01-01T00:00:00Z forged line`);
    logger.warn('a\u202eb');
    assert.deepEqual(lines, ['delivery evil\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[31mRED\\n2026-01-01T00:00:00Z forged line', 'warn: a\\u202eb']);
  });

  it('TERM-REMOTE-TEXT: the gate table escapes an audit name and a reason from the engine, each row one line', () => {
    const check = {
      url: 'https://example.com/',
      kind: 'audit',
      name: `lcp${HOSTILE}`,
      operator: '<=',
      threshold: 2500,
      value: null,
      values: [],
      verdict: 'fail',
      reason: `the API said\n${HOSTILE}`,
      level: 'error',
    };
    const table = renderGateTable({
      status: 'fail',
      checks: [check],
      aggregation: 'median',
      runs: 1,
      engine: 'remote',
      strategy: 'MOBILE',
    } as unknown as Parameters<typeof renderGateTable>[0]);
    assert.ok(!UNSAFE.test(table.replace(/\n/g, '')), table);
    const lines = table.split('\n');
    assert.equal(lines.length, 5, table);
    assert.match(lines[2]!, /^lcpevil\\u001b\]0;pwned/);
    assert.match(lines[4]!, /the API said\\nevil\\u001b/);
  });

  it('TERM-REMOTE-TEXT: the browser check table escapes the page title it read, its row one line', () => {
    const text = renderBrowserCheck({
      url: 'https://example.com/',
      passed: false,
      reason: 'title',
      checks: [{ name: 'title', expected: 'Shop', actual: `Shop\n${HOSTILE}`, passed: false }],
    } as unknown as Parameters<typeof renderBrowserCheck>[0]);
    assert.ok(!UNSAFE.test(text.replace(/\n/g, '')), text);
    assert.equal(text.split('\n').length, 3, text);
    assert.match(text, /Shop\\nevil\\u001b\]0;pwned/);
  });
});
