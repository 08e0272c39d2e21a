// The settings every area's mutation run shares; each stryker/<area>.config.mjs names only what it mutates and the
// test files that cover it, so a run never needs the whole suite (`npm run mutate -- <area>`; docs/testing.md).
// `tsconfig`: a smaller project for the TypeScript checker (the area's code and its spec) when checking each mutant
// against the whole repository costs more than running the tests.
export function areaConfig(area, { mutate, spec, tsconfig = 'tsconfig.json' }) {
  return {
    $schema: '../node_modules/@stryker-mutator/core/schema/stryker-schema.json',
    packageManager: 'npm',
    testRunner: 'mocha',
    // The tests are TypeScript run through tsx, as .mocharc.json's `import` does for mocha's own command.
    testRunnerNodeArgs: ['--import', 'tsx/esm'],
    mochaOptions: { spec, config: '.mocharc.json' },
    checkers: ['typescript'],
    tsconfigFile: tsconfig,
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
