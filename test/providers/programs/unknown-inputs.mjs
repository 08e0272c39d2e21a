// An ES-module Pulumi program: one gantry resource (`resource`, a class of gantry/providers) whose `property` is built
// from the version of a test record created in the same run — unknown until that record exists, so a preview
// hands the resource's Check the unknown placeholder (or `bad`, a known value, when the test gives one).
import * as pulumi from '@pulumi/pulumi';
import * as providers from 'gantry/providers';
import { Record } from 'gantry-test-records';

export default async function ({ resource, property, template, bad, args }) {
  const upstream = new Record('upstream', { key: 'upstream', value: 'made in this run' });
  const [before, after] = template.split('{version}');
  const value = bad ?? pulumi.interpolate`${before}${upstream.version}${after}`;
  const subject = new providers[resource]('subject', { ...args, [property]: value });
  return { subjectId: subject.id };
}
