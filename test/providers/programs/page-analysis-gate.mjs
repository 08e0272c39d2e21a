// The same program as an ES-module consumer.
import { PageAnalysisGate } from 'gantry/providers';

export default async function (args) {
  const gate = new PageAnalysisGate('gate', args);
  return { passed: gate.passed, scores: gate.scores, checks: gate.checks, reportUrl: gate.reportUrl, analyzedAt: gate.analyzedAt, engineUsed: gate.engineUsed, engineVersion: gate.engineVersion };
}
