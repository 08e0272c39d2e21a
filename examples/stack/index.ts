// The example stack Pulumi.yaml runs, written as your program would be: it imports 'gantry/providers', which resolves
// here to the built package (package self-reference), so build first. docs/architecture.md, "The example stack".
//
//   npm run build
//   gantry dev                                  # start the embedded registry, kv server and page-analysis API
//   export SECRETS_ADDR=... SECRETS_TOKEN=...   # as `gantry dev` prints them
//   export PAGEANALYSIS_BASE_URL=... PAGEANALYSIS_API_KEY=...   # its page-analysis credentials (unset: local Lighthouse)
//   pulumi config set gantry-example:registryHost 127.0.0.1:<port>
//   pulumi config set gantry-example:siteUrl http://127.0.0.1:<port>/   # a page whose title contains "Gantry"
//   pulumi config set --secret gantry-example:dbPassword
//   pulumi up
import * as pulumi from '@pulumi/pulumi';
import { BrowserCheck, KvSecret, PageAnalysisGate, RegistryModule } from 'gantry/providers';

const config = new pulumi.Config();
const registryHost = config.get('registryHost') ?? 'registry.terraform.io';
const siteUrl = config.require('siteUrl');
const release = config.get('release') ?? 'dev';

// Pinned on create; stays at that version until the constraint or the triggers change.
export const network = new RegistryModule('network', {
  source: `${registryHost}/gantry/network/aws`,
  version: '~> 1.0',
});

// The value is a Pulumi secret: encrypted in state, never in logs; the token comes from SECRETS_TOKEN at run time.
const database = new KvSecret('database', {
  mount: 'secret',
  path: 'example/database',
  data: { username: 'app', password: config.requireSecret('dbPassword') },
  customMetadata: { owner: 'platform' },
});

// The deployment stops here when the page falls below its thresholds; `release` re-runs the gate on each release.
const gate = new PageAnalysisGate(
  'home',
  {
    url: siteUrl,
    thresholds: { performance: 0.9, accessibility: 0.9, 'best-practices': 0.9, seo: 0.9 },
    audits: { 'largest-contentful-paint': 2500, 'total-blocking-time': 200 },
    runs: 3,
    triggers: { release },
  },
  { dependsOn: [database] },
);

export const browser = new BrowserCheck(
  'home-title',
  {
    url: siteUrl,
    title: 'Gantry',
    triggers: { release },
  },
  { dependsOn: [gate] },
);

export const moduleVersion = network.version;
export const modulePath = network.path;
export const secretVersion = database.version;
export const scores = gate.scores;
