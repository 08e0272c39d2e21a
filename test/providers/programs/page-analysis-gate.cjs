// A CommonJS Pulumi program (the format of a default Pulumi TypeScript project): one PageAnalysisGate with the
// test's arguments as inputs; stack outputs are the gate's outputs.
const { PageAnalysisGate } = require('gantry/providers');

module.exports = async function (args) {
  const gate = new PageAnalysisGate('gate', args);
  return { passed: gate.passed, scores: gate.scores, checks: gate.checks, reportUrl: gate.reportUrl, analyzedAt: gate.analyzedAt, engineUsed: gate.engineUsed, engineVersion: gate.engineVersion };
};
