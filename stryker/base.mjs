// The settings every area's mutation run shares; each stryker/<area>.config.mjs names only what it mutates and the
// test files that cover it, so a run never needs the whole suite (`npm run mutate -- <area>`; docs/testing.md).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The TypeScript checker compiles every mutant. Against the whole repository (800-odd files) that cost about a minute
 * a mutant under load; against a project of the area's files and its spec (the compiler follows their imports) it
 * costs seconds, so each run writes that project here (gitignored) and checks against it.
 */
function areaProject(area, files) {
  const name = `.tsconfig.${area}.json`;
  const project = { extends: '../tsconfig.json', compilerOptions: { rootDir: '..', noEmit: true }, include: [], files: files.map((file) => `../${file}`) };
  writeFileSync(path.join(here, name), `${JSON.stringify(project, null, 2)}\n`);
  return `stryker/${name}`;
}

export function areaConfig(area, { mutate, spec }) {
  return {
    $schema: '../node_modules/@stryker-mutator/core/schema/stryker-schema.json',
    packageManager: 'npm',
    testRunner: 'mocha',
    // The tests are TypeScript run through tsx, as .mocharc.json's `import` does for mocha's own command.
    testRunnerNodeArgs: ['--import', 'tsx/esm'],
    mochaOptions: { spec, config: '.mocharc.json' },
    checkers: ['typescript'],
    tsconfigFile: areaProject(area, [...mutate, ...spec]),
    typescriptChecker: { prioritizePerformanceOverAccuracy: true },
    coverageAnalysis: 'perTest',
    mutate,
    // dist/ and the benchmarks' results are build output; a sandbox copy of them only costs time.
    ignorePatterns: ['dist', 'bench/results', 'reports', '.gantry', '.tmp'],
    reporters: ['clear-text', 'progress', 'html', 'json'],
    htmlReporter: { fileName: `reports/mutation/${area}.html` },
    jsonReporter: { fileName: `reports/mutation/${area}.json` },
    thresholds: { high: 90, low: 85, break: 85 },
    concurrency: 2,
    timeoutMS: 10000,
    tempDirName: '.stryker-tmp',
    cleanTempDir: 'always',
  };
}
