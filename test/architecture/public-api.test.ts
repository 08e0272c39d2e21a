// The public API, pinned: every name `gantry` and `gantry/providers` export — values as a consumer's `import` sees them
// in the built package (dist/, through package.json's exports), the members of the namespaces (`analysis.runGate`), and
// the types its declarations export — is listed in public-api.txt beside this file. A name added, removed, or turned
// from a type into a value fails here until the list says so, so the change shows in review (docs/api.md says what is
// public and why). After a deliberate change: npm run build, then GANTRY_UPDATE_PUBLIC_API=1 npx mocha this file.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const snapshotFile = join(dirname(fileURLToPath(import.meta.url)), 'public-api.txt');
const entryPoints = [
  { specifier: 'gantry', source: 'lib/index.ts', built: 'dist/lib/index.js', declarations: 'dist/lib/index.d.ts' },
  { specifier: 'gantry/providers', source: 'providers/index.ts', built: 'dist/providers/index.js', declarations: 'dist/providers/index.d.ts' },
];

const isNamespace = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === 'Module';

function kindOf(value: unknown): string {
  if (typeof value === 'function') return /^class\b/.test(Function.prototype.toString.call(value)) ? 'class' : 'function';
  if (isNamespace(value)) return 'namespace';
  return typeof value === 'object' && value !== null ? 'object' : typeof value;
}

/** `gantry: createHttpClient (function)`, `gantry: analysis.runGate (function)`, for every value an import gives. */
function valueLines(specifier: string, module: Record<string, unknown>): string[] {
  return Object.entries(module).flatMap(([name, value]) => [
    `${specifier}: ${name} (${kindOf(value)})`,
    ...(isNamespace(value) ? Object.entries(value).map(([member, inner]) => `${specifier}: ${name}.${member} (${kindOf(inner)})`) : []),
  ]);
}

/** `gantry: HttpClientOptions (type)` for every export of the declarations that is a type only (no value behind it). */
function typeLines(specifier: string, declarations: string): string[] {
  const program = ts.createProgram([join(root, declarations)], { noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(join(root, declarations));
  assert.ok(file, `${declarations} is read`);
  const moduleSymbol = checker.getSymbolAtLocation(file);
  assert.ok(moduleSymbol, `${declarations} is a module`);
  const lines: string[] = [];
  const visit = (symbol: ts.Symbol, prefix: string): void => {
    for (const exported of checker.getExportsOfModule(symbol)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (target.flags & ts.SymbolFlags.ValueModule) visit(target, `${prefix}${exported.name}.`);
      else if (!(target.flags & ts.SymbolFlags.Value)) lines.push(`${specifier}: ${prefix}${exported.name} (type)`);
    }
  };
  visit(moduleSymbol, '');
  return lines;
}

async function currentApi(): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of entryPoints) {
    const module = (await import(entry.specifier)) as Record<string, unknown>;
    lines.push(...valueLines(entry.specifier, module), ...typeLines(entry.specifier, entry.declarations));
  }
  return lines.sort();
}

describe('architecture: the public API (gantry, gantry/providers) is the list in public-api.txt', function () {
  this.timeout(60_000);

  it('LAYER-API: the built entry points are newer than their sources (else run npm run build first)', () => {
    for (const entry of entryPoints) {
      assert.ok(existsSync(join(root, entry.built)), `${entry.built} missing: npm run build`);
      assert.ok(
        statSync(join(root, entry.built)).mtimeMs >= statSync(join(root, entry.source)).mtimeMs,
        `${entry.built} is older than ${entry.source}: npm run build`,
      );
    }
  });

  it('LAYER-API: the sorted export names of both entry points — values, namespace members and types — are the snapshot', async () => {
    const current = await currentApi();
    if (process.env.GANTRY_UPDATE_PUBLIC_API === '1') writeFileSync(snapshotFile, `${current.join('\n')}\n`);
    const pinned = readFileSync(snapshotFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    const added = current.filter((line) => !pinned.includes(line));
    const removed = pinned.filter((line) => !current.includes(line));
    assert.deepEqual(
      { added, removed },
      { added: [], removed: [] },
      'the public API changed: if it is meant to, update docs/api.md and the snapshot (GANTRY_UPDATE_PUBLIC_API=1)',
    );
    assert.deepEqual(pinned, [...pinned].sort(), 'public-api.txt is sorted');
  });

  it('LAYER-API: the comparison notices an added and a removed export (a namespace member and a type included)', () => {
    const pinned = valueLines('gantry', { version: '1', analysis: Object.assign(Object.create(null), { [Symbol.toStringTag]: 'Module', runGate() {} }) });
    assert.deepEqual(pinned, ['gantry: version (string)', 'gantry: analysis (namespace)', 'gantry: analysis.runGate (function)']);
    const grown = valueLines('gantry', { version: '1', decideRetry() {}, analysis: Object.assign(Object.create(null), { [Symbol.toStringTag]: 'Module' }) });
    assert.deepEqual(
      grown.filter((line) => !pinned.includes(line)),
      ['gantry: decideRetry (function)'],
    );
    assert.deepEqual(
      pinned.filter((line) => !grown.includes(line)),
      ['gantry: analysis.runGate (function)'],
    );
    const types = typeLines('gantry', 'dist/lib/index.d.ts');
    assert.ok(types.includes('gantry: HttpClientOptions (type)'), 'a type-only export is listed');
    assert.ok(!types.some((line) => line.startsWith('gantry: HttpError ')), 'a class is a value, listed once');
  });
});
