// A CommonJS Pulumi program (the format of a default Pulumi TypeScript project): one PageAnalysisGate with the
// test's arguments as inputs (the URL as a Pulumi secret when `secretUrl` is set); stack outputs are the gate's outputs.
const pulumi = require('@pulumi/pulumi');
const { PageAnalysisGate } = require('gantry/providers');

module.exports = async function ({ secretUrl, ...args }) {
  const gate = new PageAnalysisGate('gate', { ...args, url: secretUrl ? pulumi.secret(args.url) : args.url });
  return {
    passed: gate.passed,
    scores: gate.scores,
    checks: gate.checks,
    reportUrl: gate.reportUrl,
    analyzedAt: gate.analyzedAt,
    engineUsed: gate.engineUsed,
    engineVersion: gate.engineVersion,
  };
};
