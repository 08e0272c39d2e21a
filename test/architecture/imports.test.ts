import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// The direction of imports (docs/architecture.md, "Direction of imports"), read from the code itself: every .ts file
// under lib/ and providers/ is parsed, and every reference to another module counts — `import`, `import type`,
// `export … from`, `import x = require(…)`, `import('…')` calls and `import('…')` types — when its specifier is a
// relative path or the package's own name (`gantry`, `gantry/providers`, resolved through package.json's exports).

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const scanned = ['lib', 'providers', 'devserver'];

/** Repository-relative, forward slashes: `lib/registry/location.ts`. */
type File = string;

interface Edge {
  from: File;
  to: File;
}

function listTs(dir: string): File[] {
  const out: File[] = [];
  for (const name of readdirSync(join(root, dir)).sort()) {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) out.push(...listTs(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function specifiers(file: File): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const literal = (node: ts.Node | undefined): void => {
    if (node !== undefined && ts.isStringLiteralLike(node)) found.push(node.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `gantry` and `gantry/providers` as package.json's exports map them (dist/…/x.js back to its source x.ts). */
const selfReferences: Map<string, File> = (() => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
  const map = new Map<string, File>();
  for (const [key, target] of Object.entries(pkg.exports)) {
    const built = typeof target === 'string' ? target : (target as { default?: string }).default;
    if (built === undefined || !built.endsWith('.js')) continue;
    map.set(key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, built.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
  }
  return map;
})();

/** The file a specifier names, undefined for packages and built-ins; throws for a relative path that names nothing. */
function resolveSpecifier(from: File, spec: string): File | undefined {
  if (selfReferences.has(spec)) return selfReferences.get(spec);
  if (!spec.startsWith('./') && !spec.startsWith('../')) return undefined;
  const base = resolve(root, dirname(from), spec);
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')];
  const hit = candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  if (hit === undefined) throw new Error(`${from}: cannot resolve '${spec}'`);
  return relative(root, hit).split(sep).join('/');
}

const files: File[] = scanned.flatMap(listTs);
const inScan = new Set(files);
const edges: Edge[] = files.flatMap((from) =>
  specifiers(from)
    .map((spec) => resolveSpecifier(from, spec))
    .filter((to): to is File => to !== undefined && inScan.has(to) && to !== from)
    .map((to) => ({ from, to })),
);

/**
 * A folder-level node: `lib/<area>` for everything under lib/<area>/ (sub-folders included), `lib/<file>.ts` for a
 * root file of lib/ (errors.ts, log.ts, paths.ts …), `providers` for providers/, `devserver` for devserver/.
 */
function folderOf(file: File): string {
  const parts = file.split('/');
  if (parts[0] === 'providers') return 'providers';
  if (parts[0] === 'devserver') return 'devserver';
  return parts.length === 2 ? file : `${parts[0]}/${parts[1]}`;
}

/**
 * The nodes tied together by imports: the strongly connected components of more than one node (or a node importing
 * itself), each sorted.
 */
function components(graph: Map<string, Set<string>>): string[][] {
  // Tarjan's strongly connected components.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const strongConnect = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        strongConnect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) strongConnect(node);
  return found;
}

/**
 * One cycle per group of nodes tied together: the shortest way from the group's first node back to itself (breadth
 * first, inside the group). Every elementary cycle would be too many to read; untying one shows the next.
 */
function cycles(graph: Map<string, Set<string>>): string[][] {
  return components(graph).map((component) => {
    const members = new Set(component);
    const start = component[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const node = queue.shift()!;
      for (const next of [...(graph.get(node) ?? [])].sort()) {
        if (!members.has(next)) continue;
        if (next === start) {
          const path = [node];
          while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
          return [...path, start];
        }
        if (!previous.has(next)) {
          previous.set(next, node);
          queue.push(next);
        }
      }
    }
    return [start, start];
  });
}

function graphOf(pairs: Array<[string, string]>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [from, to] of pairs) {
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

/** `a → b → a`, each arrow followed, for a folder cycle, by one import that makes it. */
function describeCycle(cycle: string[], witness?: (from: string, to: string) => string): string {
  const arrows = cycle.join(' → ');
  if (witness === undefined) return `  ${arrows}`;
  const why = cycle.slice(1).map((to, i) => `      ${witness(cycle[i]!, to)}`);
  return [`  ${arrows}`, ...why].join('\n');
}

/** An area's entry point: `lib/<area>/index.ts`, or a root file of lib/ (`lib/errors.ts` …, `lib/index.ts`). */
function isEntryPoint(file: File): boolean {
  const parts = file.split('/');
  return parts[0] === 'lib' && (parts.length === 2 || (parts.length === 3 && parts[2] === 'index.ts'));
}

/** The imports of lib/cli/ that reach into another area of lib/ past its entry point, as `from → to`. */
function cliPastEntryPoints(list: readonly Edge[]): string[] {
  return list
    .filter(
      ({ from, to }) =>
        from.startsWith('lib/cli/') &&
        ((to.startsWith('lib/') && !to.startsWith('lib/cli/') && !isEntryPoint(to)) || (to.startsWith('devserver/') && to !== 'devserver/index.ts')),
    )
    .map(({ from, to }) => `${from} → ${to}`);
}

describe('architecture: the direction of imports (docs/architecture.md)', () => {
  it('reads the whole of lib/, providers/ and devserver/, references of every kind included', () => {
    assert.ok(files.length > 50, `only ${files.length} files found`);
    assert.ok(edges.length > 100, `only ${edges.length} imports found`);
    // Each form of reference is seen: a type-only import, a re-export and a lazy `import()` of a relative path.
    const kinds = new Set(
      files.flatMap((file) => {
        const text = readFileSync(join(root, file), 'utf8');
        return [/^import type /m.test(text) && 'import type', /^export \* from /m.test(text) && 'export from', /\bimport\('\.\.?\//.test(text) && 'import()'];
      }),
    );
    for (const kind of ['import type', 'export from', 'import()']) assert.ok(kinds.has(kind), `no ${kind} in the code: the test would not notice one`);
  });

  it('no import cycle between files', () => {
    const graph = graphOf(edges.map(({ from, to }) => [from, to]));
    const knots = components(graph);
    const text = cycles(graph).map((cycle, i) => {
      const tied = knots[i]!;
      return tied.length + 1 > cycle.length ? `${describeCycle(cycle)}\n      (${tied.length} files tied together: ${tied.join(', ')})` : describeCycle(cycle);
    });
    assert.deepEqual(text, [], `files importing each other, untie each:\n${text.join('\n')}`);
  });

  it('no import cycle between folders (lib/<area>, the root files of lib/, providers/; lib/index.ts only re-exports and is left out)', () => {
    const folderEdges = edges
      .filter(({ from }) => from !== 'lib/index.ts')
      .map(({ from, to }) => ({ from, to, a: folderOf(from), b: folderOf(to) }))
      .filter(({ a, b }) => a !== b);
    const witness = (a: string, b: string): string => {
      const edge = folderEdges.find((e) => e.a === a && e.b === b)!;
      return `${edge.from} imports ${edge.to}`;
    };
    const found = cycles(graphOf(folderEdges.map(({ a, b }) => [a, b])));
    const text = found.map((cycle) => describeCycle(cycle, witness));
    assert.deepEqual(text, [], `folders importing each other, untie each:\n${text.join('\n')}`);
  });

  it('the root files of lib/ (errors, log, redact, paths …) import only each other, and lib/http only them: every area may use both', () => {
    const isRoot = (file: File) => file.startsWith('lib/') && file.split('/').length === 2 && file !== 'lib/index.ts';
    const wrong = edges.filter(({ from, to }) => (isRoot(from) && !isRoot(to)) || (from.startsWith('lib/http/') && !to.startsWith('lib/http/') && !isRoot(to)));
    assert.deepEqual(
      wrong.map(({ from, to }) => `${from} → ${to}`),
      [],
    );
  });

  it('lib/ imports neither providers/ nor the command (lib/cli/), except lib/cli itself', () => {
    const wrong = edges.filter(
      ({ from, to }) => from.startsWith('lib/') && (to.startsWith('providers/') || (to.startsWith('lib/cli/') && !from.startsWith('lib/cli/'))),
    );
    assert.deepEqual(
      wrong.map(({ from, to }) => `${from} → ${to}`),
      [],
    );
  });

  it('providers/ reach lib/ only through an entry point (lib/index.ts, lib/<area>/index.ts, a root file of lib/), never lib/http', () => {
    const wrong = edges.filter(({ from, to }) => {
      if (!from.startsWith('providers/') || !to.startsWith('lib/')) return false;
      if (to.startsWith('lib/http/')) return true;
      return !isEntryPoint(to) || to.startsWith('lib/cli/');
    });
    assert.deepEqual(
      wrong.map(({ from, to }) => `${from} → ${to}`),
      [],
    );
  });

  it('LAYER-CLI: lib/cli/ reaches the other areas only through their entry points (lib/<area>/index.ts, a root file of lib/), as providers/ do', () => {
    const wrong = cliPastEntryPoints(edges);
    assert.deepEqual(
      wrong,
      [],
      `the command reaches past an area's entry point: import the name from lib/<area>/index.ts (export it there), or, for a part costly to load, through a loader the entry point offers (devServerModules, loadDeploymentGates):\n${wrong.join('\n')}`,
    );
  });

  it('LAYER-CLI: the rule refuses a deep import of the command, a type-only or lazy one included, and lets entry points and root files through', () => {
    // A file importing lib/webhooks/redis-queue.ts, whatever the form of the reference: specifiers() reads every form.
    assert.deepEqual(
      cliPastEntryPoints([
        { from: 'lib/cli/commands/hooks/index.ts', to: 'lib/webhooks/redis-queue.ts' },
        { from: 'lib/cli/commands/dev/oauth.ts', to: 'devserver/oauth/index.ts' },
        { from: 'lib/cli/commands/dev/oauth.ts', to: 'devserver/index.ts' },
        { from: 'lib/cli/commands/hooks/index.ts', to: 'lib/webhooks/index.ts' },
        { from: 'lib/cli/program.ts', to: 'lib/waits.ts' },
        { from: 'lib/cli/program.ts', to: 'lib/cli/groups.ts' },
      ]),
      ['lib/cli/commands/hooks/index.ts → lib/webhooks/redis-queue.ts', 'lib/cli/commands/dev/oauth.ts → devserver/oauth/index.ts'],
    );
  });

  it('LAYER-OAUTH: lib/oauth/ imports only lib/http and the root files of lib/ — lib/auth and lib/mcp build on the one OAuth core, never it on them', () => {
    const wrong = edges.filter(
      ({ from, to }) =>
        from.startsWith('lib/oauth/') && !to.startsWith('lib/oauth/') && !to.startsWith('lib/http/') && (to.split('/').length !== 2 || to === 'lib/index.ts'),
    );
    assert.deepEqual(
      wrong.map(({ from, to }) => `${from} → ${to}`),
      [],
    );
    const users = new Set(edges.filter(({ from, to }) => to.startsWith('lib/oauth/') && !from.startsWith('lib/oauth/')).map(({ from }) => folderOf(from)));
    for (const area of ['lib/auth', 'lib/mcp']) assert.ok(users.has(area), `${area} does not use lib/oauth`);
  });

  it('only the command loads the dev servers: no other part of lib/, and no provider, imports devserver/', () => {
    const wrong = edges.filter(({ from, to }) => to.startsWith('devserver/') && !from.startsWith('devserver/') && !from.startsWith('lib/cli/'));
    assert.deepEqual(
      wrong.map(({ from, to }) => `${from} → ${to}`),
      [],
    );
  });

  it('devserver/ shares no code with the clients it serves: besides itself it imports only the root files of lib/ (errors, log …)', () => {
    assert.ok(files.filter((file) => file.startsWith('devserver/')).length > 50, 'devserver/ is read');
    const wrong = edges.filter(
      ({ from, to }) =>
        from.startsWith('devserver/') && !to.startsWith('devserver/') && (!to.startsWith('lib/') || to.split('/').length !== 2 || to === 'lib/index.ts'),
    );
    assert.deepEqual(
      wrong.map(({ from, to }) => `${from} → ${to}`),
      [],
    );
  });

  it('the cycle finder reports a cycle as its path (a → b → a), and nothing for a one-way graph', () => {
    assert.deepEqual(
      cycles(
        graphOf([
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'a'],
          ['c', 'd'],
        ]),
      ),
      [['a', 'b', 'c', 'a']],
    );
    assert.deepEqual(
      cycles(
        graphOf([
          ['a', 'b'],
          ['b', 'c'],
          ['a', 'c'],
        ]),
      ),
      [],
    );
    assert.deepEqual(cycles(graphOf([['x', 'x']])), [['x', 'x']]);
  });
});
