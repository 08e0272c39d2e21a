// The HOOK-* rules no other test named in its title (issue 13, "Tests": every HOOK-* rule named in a test title),
// each exercised against the code. A HOOK-EV-* rule's facts — where the event is available (HOOK-WEBHOOK-TYPES), the
// permission an app needs (HOOK-PERMISSION-READ), its required and optional top-level properties — are the
// platform's; what Gantry does with them is checked here, from the rule's own line of rules.md (parsed below,
// independently of lib/webhooks/catalogue.ts and of test/webhooks/catalogue.test.ts, which reads the spec's tables):
// the catalogue carries them, `gantry hooks events --json` shows them, checkPayload enforces them on GitHub's real
// example payloads (@octokit/webhooks-examples, renamed by helpers/examples.ts), and a WebhookReceiver on a real
// socket runs the event's handlers for a signed example and refuses one missing a required property with 400.
//
// The HOOK-LIM-* rules on tags and branches are platform-side: the platform creates no event past the limit, which
// no receiver can observe, and the embedded platform (devserver/platform) sends no push, create or delete at all.
// Their tests check Gantry's side of each limit: the bursts the platform does send at the limit are handled, each
// delivery once.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { run } from '../../lib/cli/program.js';
import { createLogger } from '../../lib/log.js';
import { checkPayload, eventNamed, verify, WebhookReceiver, type WebhookEvent, type WebhookJob } from '../../lib/webhooks/index.js';
import { exampleDeliveries, platformEventName, type ExampleDelivery } from './helpers/examples.js';

const SECRET = 'rules-coverage: a webhook secret';
const rulesText = readFileSync(fileURLToPath(new URL('../fixtures/spec/rules.md', import.meta.url)), 'utf8');

// ---- the rules' own text ----------------------------------------------------------------------------------------

/** The text of one rule of rules.md, without its `- ID: ` prefix. */
function ruleText(id: string): string {
  const line = rulesText.split('\n').find((candidate) => candidate.startsWith(`- ${id}: `));
  assert.ok(line, `rules.md has ${id}`);
  return line.slice(`- ${id}: `.length);
}

/** HOOK-WEBHOOK-TYPES, read from its own words: "R (repositories), O (organizations), …". */
function webhookTypeWords(): Record<string, string> {
  const words = Object.fromEntries([...ruleText('HOOK-WEBHOOK-TYPES').matchAll(/\b([A-Z]) \(([a-z ]+)\)/g)].map((match) => [match[1]!, match[2]!]));
  assert.deepEqual(Object.keys(words).sort(), ['A', 'E', 'O', 'R', 'S']);
  return words;
}

/** The events AMB-28 names as having no repository scope (Gantry's documented choice: `repository` not required). */
function amb28Events(): string[] {
  const match = /^- AMB-28 \(HOOK\):[^\n]*such as ([^;]*);/m.exec(rulesText);
  assert.ok(match, 'rules.md has AMB-28');
  return [...match[1]!.matchAll(/`(\w+)`/g)].map((name) => name[1]!);
}

const plural: Record<string, string> = { objects: 'object', strings: 'string', booleans: 'boolean', 'arrays of objects': 'array of objects' };

interface RuleFacts {
  id: string;
  event: string;
  /** The webhook types, in HOOK-WEBHOOK-TYPES's words. */
  availability: string[];
  /** Null for "no permission listed". */
  permission: string | null;
  /** Properties marked R, with their type. */
  required: Map<string, string>;
  /** Typed properties marked "(not required)". */
  optionalTyped: Map<string, string>;
  /** Properties the rule says are optional (untyped lists, and the common `repository` / `sender` exceptions). */
  optional: Set<string>;
  /** Common properties the rule says are required (`organization`, `installation`). */
  commonRequired: Set<string>;
  /** "the payload has only the common properties". */
  onlyCommon: boolean;
}

/** A HOOK-EV-* rule's facts, read from its line: "`name`: available to …; permission …; …; properties: …". */
function ruleFacts(id: string): RuleFacts {
  const text = ruleText(id);
  const head = /^`(\w+)`: available to ([A-Z](?: [A-Z])*)(?: only)?; (?:permission ([^;]+)|no permission listed);/.exec(text);
  assert.ok(head, `${id}: the rule starts with the event, its availability and its permission: ${text}`);
  const words = webhookTypeWords();
  const facts: RuleFacts = {
    id,
    event: head[1]!,
    availability: head[2]!.split(' ').map((letter) => words[letter]!),
    permission: head[3] ?? null,
    required: new Map(),
    optionalTyped: new Map(),
    optional: new Set(),
    commonRequired: new Set(),
    onlyCommon: /the payload has only the common properties/.test(text),
  };
  const properties = /; properties: (.*)$/.exec(text)?.[1];
  assert.ok(properties !== undefined || facts.onlyCommon, `${id}: the rule lists properties or says there are only the common ones`);
  if (properties === undefined) return facts;
  for (const match of properties.matchAll(/((?:`\w+`(?:, | and ))*`\w+`) ((?:[a-z]+ )*?[a-z]+) R\b/g)) {
    const type = plural[match[2]!] ?? match[2]!;
    for (const name of match[1]!.matchAll(/`(\w+)`/g)) facts.required.set(name[1]!, type);
  }
  for (const match of properties.matchAll(/`(\w+)` ([a-z ]+?) \(not required\)/g)) facts.optionalTyped.set(match[1]!, match[2]!);
  for (const segment of properties.replace(/\.$/, '').split('; ')) {
    if (/ (?:are )?optional$/.test(segment)) for (const name of segment.matchAll(/`(\w+)`/g)) facts.optional.add(name[1]!);
    const common = /^`(organization|installation)` required$/.exec(segment);
    if (common) facts.commonRequired.add(common[1]!);
  }
  assert.ok(facts.required.size > 0, `${id}: at least one property marked R in "${properties}"`);
  return facts;
}

const commonNames = ['enterprise', 'installation', 'organization', 'repository', 'sender'];

/** The requiredness of each common property for the rule's event: HOOK-REQ-DEFAULT with the rule's exceptions. */
function commonRequiredness(facts: RuleFacts): Record<string, boolean> {
  const amb28 = amb28Events().includes(facts.event);
  return Object.fromEntries(
    commonNames.map((name) => {
      if (facts.required.has(name)) return [name, true];
      if (facts.optional.has(name)) return [name, false];
      if (name === 'repository') return [name, !amb28];
      if (name === 'sender') return [name, true];
      return [name, facts.commonRequired.has(name)];
    }),
  );
}

// ---- what Gantry does with them ------------------------------------------------------------------------------

interface EventsRow {
  event: string;
  availability: string[] | null;
  permission: string | null;
  required: string[];
  notes: string | null;
}

/** `gantry hooks events --json`, run in this process as the command line runs it. */
async function hooksEventsJson(): Promise<EventsRow[]> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _encoding, callback) {
          append(String(chunk));
          callback();
        },
      }),
      { isTTY: false, columns: 200 },
    );
  const previousExitCode = process.exitCode;
  const code = await run(['node', 'gantry', 'hooks', 'events', '--json'], {
    stdout: sink((text) => {
      stdout += text;
    }),
    stderr: sink((text) => {
      stderr += text;
    }),
  });
  process.exitCode = previousExitCode;
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout) as EventsRow[];
}

const examples = exampleDeliveries();

function examplesOf(event: string): ExampleDelivery[] {
  const found = examples.filter((delivery) => delivery.event === event);
  assert.ok(found.length > 0, `@octokit/webhooks-examples has ${event} deliveries`);
  return found;
}

function without(payload: Record<string, unknown>, name: string): Record<string, unknown> {
  const copy = { ...payload };
  delete copy[name];
  return copy;
}

/** A value of none of the types a property of `type` allows. */
function wrongValue(type: string): unknown {
  if (type === 'integer') return 1.5;
  if (type === 'number' || type === 'boolean') return 'text';
  return 42;
}

interface Posted {
  status: number;
  body: Record<string, unknown>;
}

interface Started {
  receiver: WebhookReceiver;
  server: Server;
  url: string;
}

async function startReceiver(): Promise<Started> {
  const receiver = new WebhookReceiver({ secrets: [SECRET], logger: createLogger({ level: 'error', write: () => {} }) });
  const server = createServer(receiver.handler());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { receiver, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` };
}

async function stopReceiver(started: Started | undefined): Promise<void> {
  if (!started) return;
  await started.receiver.close(1_000);
  await new Promise<void>((resolve) => started.server.close(() => resolve()));
}

/** One delivery with the spec's headers, signed by an independent signer (@octokit/webhooks-methods). */
async function post(url: string, event: string, payload: unknown, id: string = randomUUID()): Promise<Posted> {
  const body = JSON.stringify(payload);
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Platform-Hookshot/c0ffee1',
      'x-platform-event': event,
      'x-platform-delivery': id,
      'x-platform-hook-id': '4242',
      'x-platform-hook-installation-target-type': 'repository',
      'x-platform-hook-installation-target-id': '17273051',
      'x-hub-signature-256': await octokitSign(SECRET, body),
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('webhooks: the HOOK-* rules no other test names, each against the code', function () {
  this.timeout(60_000);
  let listed: EventsRow[] = [];
  let shared: Started | undefined;
  before(async () => {
    listed = await hooksEventsJson();
    shared = await startReceiver();
  });
  after(() => stopReceiver(shared));

  /**
   * A HOOK-EV-* rule against the code: the catalogue's entry, the `gantry hooks events --json` row, checkPayload on
   * every example and on each with a required property removed or of the wrong type, and a signed example through
   * a receiver (its `event` and `event.action` handlers run) next to one missing a required property (400).
   */
  async function checkEventRule(id: string): Promise<{ facts: RuleFacts; entry: WebhookEvent; row: EventsRow; deliveries: ExampleDelivery[] }> {
    const facts = ruleFacts(id);
    const entry = eventNamed(facts.event);
    assert.ok(entry, `${id}: ${facts.event} is in the catalogue`);
    assert.equal(entry.specified, true);

    // The catalogue carries the rule's facts (HOOK-WEBHOOK-TYPES, HOOK-PERMISSION-READ, the properties).
    assert.deepEqual([...(entry.availability ?? [])].sort(), [...facts.availability].sort(), `${id}: availability`);
    assert.equal(entry.permission, facts.permission, `${id}: permission`);
    const property = (name: string) => entry.properties.find((candidate) => candidate.name === name);
    for (const [name, type] of facts.required) {
      assert.deepEqual({ name, type: property(name)?.type, required: property(name)?.required }, { name, type, required: true }, `${id}: ${name} ${type} R`);
    }
    for (const [name, type] of facts.optionalTyped) {
      assert.deepEqual(
        { name, type: property(name)?.type, required: property(name)?.required },
        { name, type, required: false },
        `${id}: ${name} not required`,
      );
    }
    for (const name of facts.optional) assert.equal(property(name)?.required, false, `${id}: ${name} optional`);
    const common = commonRequiredness(facts);
    for (const name of commonNames) assert.equal(property(name)?.required, common[name], `${id}: the common property ${name}`);
    const ownRequired = entry.properties.filter((candidate) => candidate.required && !commonNames.includes(candidate.name)).map((candidate) => candidate.name);
    const ruleOwn = [...facts.required.keys()].filter((name) => !commonNames.includes(name));
    assert.deepEqual(ownRequired.sort(), [...ruleOwn].sort(), `${id}: the catalogue requires what the rule marks R, nothing more`);
    if (facts.onlyCommon)
      assert.ok(
        entry.properties.every((candidate) => candidate.common),
        `${id}: only the common properties`,
      );

    // `gantry hooks events --json` shows them: where the event is available, its permission, its own required properties.
    const row = listed.find((candidate) => candidate.event === facts.event);
    assert.ok(row, `${id}: gantry hooks events lists ${facts.event}`);
    assert.deepEqual([...(row.availability ?? [])].sort(), [...facts.availability].sort(), `${id}: hooks events availability`);
    assert.equal(row.permission, facts.permission, `${id}: hooks events permission`);
    const requiredAll = [...new Set([...facts.required.keys(), ...commonNames.filter((name) => common[name])])];
    assert.deepEqual([...row.required].sort(), [...requiredAll].sort(), `${id}: hooks events lists every required property, the common ones included`);
    assert.equal(row.notes, entry.notes, `${id}: hooks events notes`);

    // checkPayload enforces them on GitHub's real payloads.
    const deliveries = examplesOf(facts.event);
    const mustHave = [...new Set([...facts.required.keys(), ...commonNames.filter((name) => common[name])])];
    for (const delivery of deliveries) {
      assert.deepEqual(
        checkPayload(facts.event, delivery.payload),
        { ok: true, known: true, action: delivery.action, ghostSender: false },
        `${id}: ${delivery.id}`,
      );
      for (const name of mustHave) {
        if (!Object.hasOwn(delivery.payload, name)) continue;
        const result = checkPayload(facts.event, without(delivery.payload, name));
        assert.ok(!result.ok, `${id}: ${delivery.id} without ${name} is refused`);
        assert.deepEqual({ missing: result.missing, wrongType: result.wrongType }, { missing: [name], wrongType: [] }, `${id}: ${delivery.id} without ${name}`);
        assert.match(result.message, new RegExp(`^a ${facts.event} delivery .*was refused: missing the required property ${name}$`));
      }
      for (const [name, type] of [...facts.required, ...facts.optionalTyped]) {
        if (!Object.hasOwn(delivery.payload, name)) continue;
        const result = checkPayload(facts.event, { ...delivery.payload, [name]: wrongValue(type) });
        assert.ok(!result.ok, `${id}: ${delivery.id} with a ${name} that is no ${type}`);
        assert.deepEqual(result.wrongType, [{ property: name, expected: type }], `${id}: ${delivery.id} ${name}`);
      }
      for (const name of commonNames.filter((candidate) => !common[candidate])) {
        assert.equal(checkPayload(facts.event, without(delivery.payload, name)).ok, true, `${id}: ${delivery.id} without the optional ${name}`);
      }
    }
    for (const name of mustHave) {
      assert.ok(
        deliveries.some((delivery) => Object.hasOwn(delivery.payload, name)),
        `${id}: some example carries ${name}, so its removal was checked`,
      );
    }

    // A receiver runs the event's handlers for a signed example, and refuses one missing a required property.
    const [first] = deliveries;
    const seen: string[] = [];
    const guid = randomUUID();
    shared!.receiver.on(facts.event, (context) => void seen.push(`${context.event} ${context.id}`));
    if (first!.action) shared!.receiver.on(`${facts.event}.${first!.action}`, (context) => void seen.push(`${context.event}.${context.action} ${context.id}`));
    const accepted = await post(shared!.url, facts.event, first!.payload, guid);
    assert.deepEqual({ status: accepted.status, body: accepted.body }, { status: 200, body: { status: 'done' } }, `${id}: ${first!.id} delivered`);
    assert.deepEqual(seen, [`${facts.event} ${guid}`, ...(first!.action ? [`${facts.event}.${first!.action} ${guid}`] : [])]);
    const removed = mustHave.find((name) => Object.hasOwn(first!.payload, name))!;
    const refused = await post(shared!.url, facts.event, without(first!.payload, removed));
    assert.equal(refused.status, 400, `${id}: ${first!.id} without ${removed}`);
    assert.match(String(refused.body.message), new RegExp(`missing the required property ${removed}$`));
    assert.equal(seen.length, first!.action ? 2 : 1, `${id}: nothing refused reaches a handler`);
    return { facts, entry, row, deliveries };
  }

  describe('HOOK-EV-*: event rules', () => {
    it('HOOK-EV-BRANCH-PROTECTION-RULE: R O A, Administration (repository), `rule` object R — catalogue, hooks events, checkPayload, receiver', async () => {
      await checkEventRule('HOOK-EV-BRANCH-PROTECTION-RULE');
    });

    it('HOOK-EV-CODE-SCANNING-ALERT: R O A, Code scanning alerts, `alert` object, `commit_oid` and `ref` strings R', async () => {
      await checkEventRule('HOOK-EV-CODE-SCANNING-ALERT');
    });

    it('HOOK-EV-COMMIT-COMMENT: R O A, Contents, `comment` object R', async () => {
      await checkEventRule('HOOK-EV-COMMIT-COMMENT');
    });

    it('HOOK-EV-CREATE: R O A, Contents, a branch or tag created; `description` string or null R (null passes, absent is refused), master_branch, pusher_type, ref, ref_type R', async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-CREATE');
      assert.equal(entry.notes, 'branch or tag created');
      const tag = deliveries.find((delivery) => delivery.payload.ref_type === 'tag')!;
      const branch = { ...tag.payload, ref: 'feature/gate', ref_type: 'branch', description: null };
      assert.equal(checkPayload('create', branch).ok, true, 'a branch created, with a null description');
      const noDescription = checkPayload('create', without(branch, 'description'));
      assert.ok(!noDescription.ok && noDescription.missing.join() === 'description', 'null is allowed, absent is not');
    });

    it('HOOK-EV-DELETE: R O A, Contents, a branch or tag deleted; pusher_type, ref, ref_type strings R', async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-DELETE');
      assert.equal(entry.notes, 'branch or tag deleted');
      assert.equal(checkPayload('delete', { ...deliveries[0]!.payload, ref: 'feature/gate', ref_type: 'branch' }).ok, true, 'a branch deleted');
    });

    it("HOOK-EV-DEPENDENCY-ALERT: R O A, Dependency alerts, `alert` object R — GitHub's dependabot_alert examples under the spec's name", async () => {
      const { deliveries } = await checkEventRule('HOOK-EV-DEPENDENCY-ALERT');
      assert.equal(platformEventName('dependabot_alert'), 'dependency_alert');
      assert.ok(deliveries.every((delivery) => delivery.githubEvent === 'dependabot_alert'));
    });

    it('HOOK-EV-DEPLOY-KEY: R O A, Deployments, `key` object R', async () => {
      await checkEventRule('HOOK-EV-DEPLOY-KEY');
    });

    it('HOOK-EV-DEPLOYMENT-REVIEW: A only, Deployments, `since` string R, `workflow_run` object or null R, the untyped optional ones of any shape, `organization` required', async () => {
      const { deliveries } = await checkEventRule('HOOK-EV-DEPLOYMENT-REVIEW');
      const payload = deliveries[0]!.payload;
      assert.equal(checkPayload('deployment_review', { ...payload, workflow_run: null }).ok, true, 'workflow_run may be null');
      for (const name of ['approver', 'comment', 'reviewers', 'workflow_job_run', 'workflow_job_runs']) {
        assert.equal(checkPayload('deployment_review', without(payload, name)).ok, true, `${name} may be absent`);
        assert.equal(checkPayload('deployment_review', { ...payload, [name]: 42 }).ok, true, `${name}: the spec shows no type, so none is imposed`);
      }
      const noOrganization = checkPayload('deployment_review', without(payload, 'organization'));
      assert.ok(!noOrganization.ok && noOrganization.missing.join() === 'organization', 'HOOK-REQ-ORGANIZATION-REQUIRED');
    });

    it('HOOK-EV-DISCUSSION-COMMENT: R O A, Discussions, public preview; `comment` and `discussion` objects R', async () => {
      const { entry } = await checkEventRule('HOOK-EV-DISCUSSION-COMMENT');
      assert.equal(entry.notes, 'public preview');
    });

    it('HOOK-EV-FORK: E R O A (enterprises too), Contents, `forkee` object R', async () => {
      const { entry } = await checkEventRule('HOOK-EV-FORK');
      assert.ok(entry.availability!.includes('enterprises'));
    });

    it("HOOK-EV-PLATFORM-APP-AUTHORIZATION: A only, no permission listed, sent by default (cannot be unsubscribed); `sender` object R although the payload has no repository (AMB-28) — GitHub's github_app_authorization examples", async () => {
      const { entry, row, deliveries } = await checkEventRule('HOOK-EV-PLATFORM-APP-AUTHORIZATION');
      assert.deepEqual(entry.availability, ['apps']);
      assert.equal(row.permission, null, 'no permission to ask for: the app gets it by default');
      assert.match(
        entry.notes!,
        /sent by default to the app, cannot be unsubscribed; occurs when a user revokes authorization of an app \(the installation remains\)/,
      );
      assert.ok(deliveries.every((delivery) => delivery.githubEvent === 'github_app_authorization' && !('repository' in delivery.payload)));
      const noSender = checkPayload('platform_app_authorization', { action: 'revoked' });
      assert.ok(!noSender.ok && noSender.missing.join() === 'sender', 'the user who revoked is the whole payload');
    });

    it('HOOK-EV-PUBLIC: R O A, Metadata, a repository made public; only the common properties (repository and sender required)', async () => {
      const { entry, row } = await checkEventRule('HOOK-EV-PUBLIC');
      assert.equal(entry.notes, 'repository changed from private to public');
      assert.deepEqual([...row.required].sort(), ['repository', 'sender']);
    });

    it('HOOK-EV-PULL-REQUEST-REVIEW: R O A, Pull requests, `pull_request` and `review` objects R', async () => {
      await checkEventRule('HOOK-EV-PULL-REQUEST-REVIEW');
    });

    it('HOOK-EV-PULL-REQUEST-REVIEW-COMMENT: R O A, Pull requests, `comment` and `pull_request` objects R', async () => {
      await checkEventRule('HOOK-EV-PULL-REQUEST-REVIEW-COMMENT');
    });

    it('HOOK-EV-PULL-REQUEST-REVIEW-THREAD: R O A, Pull requests, `pull_request` and `thread` objects R, `updated_at` string or null not required, `sender` optional', async () => {
      const { deliveries } = await checkEventRule('HOOK-EV-PULL-REQUEST-REVIEW-THREAD');
      const payload = deliveries[0]!.payload;
      for (const updatedAt of [null, '2026-11-20T10:00:00Z'])
        assert.equal(checkPayload('pull_request_review_thread', { ...payload, updated_at: updatedAt }).ok, true);
      const wrong = checkPayload('pull_request_review_thread', { ...payload, updated_at: 1700000000 });
      assert.ok(!wrong.ok);
      assert.deepEqual(wrong.wrongType, [{ property: 'updated_at', expected: 'string or null' }]);
    });

    it('HOOK-EV-PUSH: R O A, Contents; a tag push, a branch push with commits and a deletion (head_commit null) pass; its twelve properties R, `repository` among them; `sender` optional', async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-PUSH');
      assert.equal(entry.notes, 'commit or tag push, branch or tag deletion, repository created from template');
      assert.ok(
        deliveries.some((delivery) => String(delivery.payload.ref).startsWith('refs/tags/') && delivery.payload.created === true),
        'a tag push',
      );
      assert.ok(
        deliveries.some((delivery) => String(delivery.payload.ref).startsWith('refs/heads/') && (delivery.payload.commits as unknown[]).length > 0),
        'a commit push',
      );
      assert.ok(
        deliveries.some(
          (delivery) => delivery.payload.deleted === true && delivery.payload.head_commit === null && /^0{40}$/.test(String(delivery.payload.after)),
        ),
        'a deletion',
      );
      const payload = deliveries[0]!.payload;
      assert.equal(checkPayload('push', without(payload, 'sender')).ok, true, 'sender optional');
      assert.equal(checkPayload('push', { ...payload, base_ref: 'refs/heads/main' }).ok, true);
      const noBaseRef = checkPayload('push', without(payload, 'base_ref'));
      assert.ok(!noBaseRef.ok && noBaseRef.missing.join() === 'base_ref', 'base_ref may be null, not absent');
      const noRepository = checkPayload('push', without(payload, 'repository'));
      assert.ok(!noRepository.ok && noRepository.missing.join() === 'repository');
    });

    it('HOOK-EV-RELEASE: R O A, Contents, `release` object R', async () => {
      await checkEventRule('HOOK-EV-RELEASE');
    });

    it('HOOK-EV-REPOSITORY: E R O A, Metadata, only the common properties — the event named like the common `repository`, which it requires', async () => {
      const { entry, row } = await checkEventRule('HOOK-EV-REPOSITORY');
      assert.ok(entry.availability!.includes('enterprises'));
      assert.deepEqual([...row.required].sort(), ['repository', 'sender']);
      assert.ok(entry.properties.every((property) => property.common));
    });

    it("HOOK-EV-REPOSITORY-DISPATCH: A only, Contents; `action` R (the dispatch's event_type, so handlers on repository_dispatch.<event_type> run), `branch`, `client_payload` (null passes) R, `installation` required", async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-REPOSITORY-DISPATCH');
      assert.deepEqual(entry.availability, ['apps']);
      assert.equal(entry.notes, 'occurs on a dispatch POST request; `action` equals its `event_type`');
      const payload: Record<string, unknown> = { ...deliveries[0]!.payload, action: 'deploy-site', client_payload: null };
      const ran: string[] = [];
      shared!.receiver.on('repository_dispatch.deploy-site', (context) => void ran.push(`${context.action} ${String(context.installationId)}`));
      const answer = await post(shared!.url, 'repository_dispatch', payload);
      assert.equal(answer.status, 200);
      assert.deepEqual(
        ran,
        [`deploy-site ${(payload.installation as { id: number }).id}`],
        "the event_type picks the handler; the installation is the context's",
      );
      const noAction = checkPayload('repository_dispatch', without(payload, 'action'));
      assert.ok(!noAction.ok && noAction.missing.join() === 'action', 'unlike other events, action is required here');
      const noInstallation = checkPayload('repository_dispatch', without(payload, 'installation'));
      assert.ok(!noInstallation.ok && noInstallation.missing.join() === 'installation', 'HOOK-REQ-INSTALLATION-REQUIRED');
    });

    it('HOOK-EV-REPOSITORY-IMPORT: R O (no apps), no permission listed, `status` string R of any value (the allowed ones are not shown)', async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-REPOSITORY-IMPORT');
      assert.ok(!entry.availability!.includes('apps'));
      for (const status of ['success', 'cancelled', 'failure', 'something new'])
        assert.equal(checkPayload('repository_import', { ...deliveries[0]!.payload, status }).ok, true, status);
    });

    it('HOOK-EV-REPOSITORY-VULNERABILITY-ALERT: R O, no permission listed, closing down (use dependency_alert); `alert` object R', async () => {
      const { entry } = await checkEventRule('HOOK-EV-REPOSITORY-VULNERABILITY-ALERT');
      assert.equal(entry.notes, 'closing down; use `dependency_alert`');
      assert.ok(eventNamed('dependency_alert'), 'the event it points to is in the catalogue');
    });

    it('HOOK-EV-SECURITY-ADVISORY: A only, no permission listed, global reviewed advisories; `security_advisory` object R, neither repository nor sender needed (GitHub sends neither)', async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-SECURITY-ADVISORY');
      assert.equal(entry.notes, 'global reviewed advisories');
      assert.ok(deliveries.every((delivery) => !('repository' in delivery.payload) && !('sender' in delivery.payload)));
      assert.equal(checkPayload('security_advisory', { action: 'published', security_advisory: {} }).ok, true);
    });

    it('HOOK-EV-SPONSORSHIP: S only (sponsored accounts), no permission listed, hosted platform only, cancellation only for recurring sponsorships; `sponsorship` object R, `repository` optional', async () => {
      const { entry, deliveries } = await checkEventRule('HOOK-EV-SPONSORSHIP');
      assert.deepEqual(entry.availability, ['sponsored accounts']);
      assert.equal(entry.notes, 'hosted platform only; cancellation event only for recurring sponsorships');
      assert.ok(
        deliveries.every((delivery) => !('repository' in delivery.payload)),
        'GitHub sends no repository',
      );
    });

    it('HOOK-EV-STAR: R O A, Metadata, `starred_at` string or null R — null when a star is deleted, absent refused', async () => {
      const { deliveries } = await checkEventRule('HOOK-EV-STAR');
      const deleted = deliveries.find((delivery) => delivery.action === 'deleted')!;
      assert.equal(deleted.payload.starred_at, null);
      const absent = checkPayload('star', without(deleted.payload, 'starred_at'));
      assert.ok(!absent.ok && absent.missing.join() === 'starred_at');
    });
  });

  describe("HOOK-LIM-*: limits the platform applies, and Gantry's side of each", () => {
    let started: Started | undefined;
    afterEach(async () => {
      await stopReceiver(started);
      started = undefined;
    });

    it("HOOK-LIM-PUSH-TAGS, HOOK-LIM-CREATE-DELETE-TAGS (platform-side; Gantry's side): three tags pushed and deleted at once — the most that still makes events — arrive as three push, three create and three delete deliveries for one commit, and each runs once", async () => {
      assert.match(ruleText('HOOK-LIM-PUSH-TAGS'), /not created when more than three tags are pushed at once/);
      assert.match(ruleText('HOOK-LIM-CREATE-DELETE-TAGS'), /do not occur when more than three tags are created or deleted at once/);
      started = await startReceiver();
      const ran: string[] = [];
      started.receiver.on(['push', 'create', 'delete'], (context) => void ran.push(`${context.event} ${String(context.payload.ref)}`));
      const push = examplesOf('push').find((delivery) => delivery.payload.created === true && String(delivery.payload.ref).startsWith('refs/tags/'))!.payload;
      const create = examplesOf('create')[0]!.payload;
      const remove = examplesOf('delete')[0]!.payload;
      const tags = ['v1.0.0', 'v1.0.1', 'v1.0.2'];
      const sent = tags.flatMap((tag) => [
        { event: 'push', payload: { ...push, ref: `refs/tags/${tag}` }, id: randomUUID() },
        { event: 'create', payload: { ...create, ref: tag, ref_type: 'tag' }, id: randomUUID() },
        { event: 'delete', payload: { ...remove, ref: tag, ref_type: 'tag' }, id: randomUUID() },
      ]);
      const answers = await Promise.all(sent.map((delivery) => post(started!.url, delivery.event, delivery.payload, delivery.id)));
      assert.deepEqual(
        answers.map((answer) => answer.status),
        sent.map(() => 200),
        JSON.stringify(answers),
      );
      assert.deepEqual(
        ran.sort(),
        tags.flatMap((tag) => [`create ${tag}`, `delete ${tag}`, `push refs/tags/${tag}`]).sort(),
        'one run per delivery: the same commit and tag names do not make them duplicates',
      );
      const again = await post(started.url, 'push', sent[0]!.payload, sent[0]!.id);
      assert.deepEqual({ status: again.status, kind: again.body.status }, { status: 200, kind: 'duplicate' }, 'a redelivery is known by its GUID');
      assert.equal(ran.length, 9);
    });

    it("HOOK-LIM-PUSH-BRANCHES (platform-side; Gantry's side): one push of 5000 branches — the most that still makes push events — is 5000 deliveries, and the receiver's queue remembers them all: a redelivery of the first is still a duplicate", async function () {
      this.timeout(120_000);
      assert.match(ruleText('HOOK-LIM-PUSH-BRANCHES'), /not created when more than 5000 branches are pushed at once/);
      started = await startReceiver();
      let runs = 0;
      started.receiver.on('push', () => void (runs += 1));
      const push = examplesOf('push').find((delivery) => String(delivery.payload.ref).startsWith('refs/heads/'))!.payload;
      const firstId = randomUUID();
      const first = await post(started.url, 'push', { ...push, ref: 'refs/heads/branch-0' }, firstId);
      assert.equal(first.status, 200);
      // The other 4999 go straight on the receiver's own queue (what it does with a delivery once verified and checked).
      const queue = started.receiver.queue;
      const ids: string[] = [];
      for (let index = 1; index < 5000; index++) {
        const job: WebhookJob = {
          id: randomUUID(),
          event: 'push',
          action: undefined,
          hookId: '4242',
          installationId: undefined,
          payload: { ...push, ref: `refs/heads/branch-${index}` },
          receivedAt: new Date().toISOString(),
        };
        ids.push(job.id);
        assert.deepEqual(await queue.add(job), { added: true });
      }
      for (const jobId of ids) assert.equal((await queue.waitFor(jobId, 60_000)).state, 'done');
      assert.equal(runs, 5000);
      const again = await post(started.url, 'push', { ...push, ref: 'refs/heads/branch-0' }, firstId);
      assert.deepEqual({ status: again.status, kind: again.body.status }, { status: 200, kind: 'duplicate' });
      assert.equal(runs, 5000, 'not run again');
    });
  });

  describe('the HOOK ambiguities no other test names', () => {
    it('HOOK-HDR-SIGNATURE-SHA256 (AMB-30): the sha256 signature is keyed by the secret, as the sha1 row says — verify() accepts HMAC-SHA256(secret, body) and nothing keyed otherwise', () => {
      const body = Buffer.from(JSON.stringify(examplesOf('push')[0]!.payload));
      const keyed = (key: string) => `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
      assert.deepEqual(verify([SECRET], body, { 'x-hub-signature-256': keyed(SECRET) }), { ok: true, algorithm: 'sha256', secretIndex: 0 });
      for (const key of ['', body.toString(), 'sha256']) {
        const result = verify([SECRET], body, { 'x-hub-signature-256': keyed(key) });
        assert.ok(!result.ok && result.reason === 'mismatch', `keyed by ${JSON.stringify(key.slice(0, 10))}`);
      }
    });

    it('HOOK-PERMISSION-READ (AMB-31): check_suite\'s permission is the spec\'s bare "Checks", check_run\'s "Checks (repository)" — kept as written, in the catalogue and in hooks events', () => {
      assert.match(
        rulesText,
        /^- AMB-31 \(HOOK\): The permission for `check_suite` is "Checks", without the "\(repository\)" qualifier that `check_run` has\./m,
      );
      assert.equal(eventNamed('check_suite')!.permission, ruleFacts('HOOK-EV-CHECK-SUITE').permission);
      assert.equal(eventNamed('check_suite')!.permission, 'Checks');
      assert.equal(eventNamed('check_run')!.permission, 'Checks (repository)');
      assert.deepEqual(
        listed.filter((row) => row.event.startsWith('check_')).map((row) => [row.event, row.permission]),
        [
          ['check_run', 'Checks (repository)'],
          ['check_suite', 'Checks'],
        ],
      );
    });
  });
});
