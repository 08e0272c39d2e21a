// The same program as an ES-module consumer.
import * as providers from 'gantry/providers';

export default async function ({ resources }) {
  for (const { resource, name, args } of resources) new providers[resource](name, args);
  return {};
}
