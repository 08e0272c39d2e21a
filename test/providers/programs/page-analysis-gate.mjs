// The same program as an ES-module consumer.
import * as pulumi from '@pulumi/pulumi';
import { PageAnalysisGate } from 'gantry/providers';

export default async function ({ secretUrl, ...args }) {
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
}
