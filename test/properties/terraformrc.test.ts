import assert from 'node:assert/strict';
import { CliConfigError, parseCliConfigCredentials } from '../../lib/registry/cliconfig.js';
import { anyText, check, fc, fromAlphabet, typed } from './fc.js';

// Tokens carry a prefix no other test uses: parsing registers every token it reads for redaction, process-wide.
const token = fc.string({ minLength: 1, maxLength: 16 }).map((s) => `PROPtok${s}`);
const host = fc
  .tuple(fc.constantFrom('a', 'reg', 'x-1'), fc.constantFrom('example.com', 'Example.ORG', 'test'), fc.constantFrom('', ':443', ':8443'))
  .map(([a, b, p]) => `${a}.${b}${p}`);
const normalised = (h: string) => h.toLowerCase().replace(/:443$/, '');

/** HCL and JSON pieces in any order: blocks, labels, heredocs, comments, escapes, unclosed things. */
const nearHcl = fromAlphabet(
  [
    'credentials',
    ' ',
    '\n',
    '"a.example.com"',
    '{',
    '}',
    'token',
    '=',
    '"PROPtokx"',
    '"\\u00e9"',
    '"\\q"',
    '<<EOT\n',
    'EOT\n',
    '# c\n',
    '/*',
    '*/',
    '[',
    ']',
    ',',
    ':',
    '"',
    '\\',
    '\0',
    'host',
  ],
  24,
);

describe('PROP-TERRAFORMRC: credentials blocks of a Terraform CLI configuration file, HCL or JSON', () => {
  it('PROP-TERRAFORMRC: parseCliConfigCredentials answers a map or a CliConfigError, whatever the text', () => {
    check(
      anyText(nearHcl),
      (text) => {
        const answer = typed(() => parseCliConfigCredentials(text, '.terraformrc'));
        if (!answer.ok) assert.ok(answer.error instanceof CliConfigError, answer.error.constructor.name);
      },
      800,
    );
  });

  it('PROP-TERRAFORMRC: credentials printed as HCL blocks, HCL heredocs or JSON read back as the same map (the last block for a host wins)', () => {
    const entries = fc.array(fc.tuple(host, token), { minLength: 1, maxLength: 4 });
    check(
      fc.tuple(entries, fc.constantFrom('hcl', 'heredoc', 'json', 'nested')),
      ([given, form]) => {
        const expected = new Map<string, string>();
        for (const [h, t] of given) {
          expected.delete(normalised(h));
          expected.set(normalised(h), t);
        }
        const text =
          form === 'json'
            ? JSON.stringify({ credentials: Object.fromEntries(given.map(([h, t]) => [h, { token: t }])) }, null, 1)
            : form === 'nested'
              ? `credentials {\n${given.map(([h, t]) => `  ${JSON.stringify(h)} {\n    token = ${JSON.stringify(t)}\n  }`).join('\n')}\n}\n`
              : given
                  .map(
                    ([h, t]) =>
                      `# ${h}\ncredentials ${JSON.stringify(h)} {\n  token = ${form === 'hcl' || /\n|\r|^\s|\s$/.test(t) ? JSON.stringify(t) : `<<EOT\n${t}\nEOT`}\n}`,
                  )
                  .join('\n');
        const read = parseCliConfigCredentials(text, '.terraformrc');
        if (form === 'json') {
          // JSON keeps one key per host spelling; compare through the object JSON.parse would build.
          const last = new Map<string, string>();
          for (const [h, t] of Object.entries(JSON.parse(text).credentials as Record<string, { token: string }>)) last.set(normalised(h), t.token);
          for (const [h, t] of read) assert.equal(t, last.get(h));
          return;
        }
        if (form === 'heredoc') {
          assert.equal(read.size, expected.size);
          for (const [h, t] of read) assert.equal(t.replace(/\n$/, ''), expected.get(h));
          return;
        }
        assert.deepEqual([...read].sort(), [...expected].sort());
      },
      400,
    );
  });
});
