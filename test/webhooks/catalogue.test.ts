// The event catalogue (lib/webhooks/catalogue.ts) against the specification's own text: this test parses
// the specification's text (test/fixtures/spec/: copies of ../shared/spec, which a clone of this repository does not
// carry) — the Events table (names, availability, permission, notes), the
// event-specific properties table (names, types, R) and the common properties' requiredness paragraph — and
// rules.md (one HOOK-EV-* rule per event row; AMB-28), and compares every entry. The parser is
// independent of the catalogue, which is hand-written data: a wrong letter, permission, type or R fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../lib/errors.js';
import { commonRequiredness, eventNamed, webhookEvents, webhookTypeLetters, type WebhookEvent } from '../../lib/webhooks/catalogue.js';

const specFile = fileURLToPath(new URL('../fixtures/spec/002_ad00ac411f4313b1.txt', import.meta.url));
const rulesFile = fileURLToPath(new URL('../fixtures/spec/rules.md', import.meta.url));
const spec = readFileSync(specFile, 'utf8');
const rules = readFileSync(rulesFile, 'utf8');

/** The rows of the Markdown table whose header line is `header`, as arrays of trimmed cells. */
function tableAfter(text: string, header: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === header);
  assert.ok(start >= 0, `the spec has the table "${header}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, line.lastIndexOf('|'))
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

interface SpecEvent {
  name: string;
  availability: string[] | null;
  permission: string | null;
  permissionShown: boolean;
  notes: string | null;
}

function specEvents(): SpecEvent[] {
  return tableAfter(spec, '| Event | Availability | Permission | Notes |').map(([name, availability, permission, notes]) => ({
    name: name!,
    availability: availability === 'not shown' ? null : availability!.split(/\s+/),
    permission: permission === 'none listed' || permission === 'not shown' ? null : permission!,
    permissionShown: permission !== 'not shown',
    notes: notes === '' ? null : notes!,
  }));
}

interface SpecProperty {
  name: string;
  type: string | null;
  /** 'always', 'optional' or the condition's words ("for the answered action", "assignment actions"). */
  required: 'always' | 'optional' | 'for some actions';
  oneOf?: string[];
  maxItems?: number;
}

/** Splits a cell at `;` outside parentheses (status's `branches` has one inside). */
function segments(cell: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of cell) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ';' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += char;
  }
  out.push(current.trim());
  return out.filter((segment) => segment !== '');
}

const singular: Record<string, string> = { 'arrays of objects': 'array of objects', strings: 'string', booleans: 'boolean', objects: 'object' };

function names(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

function parseProperties(cell: string): SpecProperty[] {
  if (cell.startsWith('optional:')) {
    // deployment_protection_rule: "optional: `a`, `b` (strings), `c` (object or null), …"
    return [...cell.slice('optional:'.length).matchAll(/((?:`\w+`,?\s*)+)\(([^)]+)\)/g)].flatMap(([, list, type]) =>
      names(list!).map((name) => ({ name, type: singular[type!] ?? type!, required: 'optional' as const })),
    );
  }
  return segments(cell).flatMap((segment): SpecProperty[] => {
    const parenthetical = [...segment.matchAll(/\(([^)]*)\)/g)].map((match) => match[1]!).join(' ');
    const bare = segment
      .replace(/\([^)]*\)/g, '')
      .replace(/\s+/g, ' ')
      .trim();
    const listed = names(bare);
    const after = bare.slice(bare.lastIndexOf('`') + 1).trim();
    const conditional = /for the \w+ action/.test(after) || /assignment actions/.test(parenthetical);
    const required = /(^|\s)R(\s|$)/.test(after) ? (conditional ? 'for some actions' : 'always') : 'optional';
    let type: string | null =
      after
        .replace(/(^|\s)R(\s.*)?$/, '')
        .replace(/^optional$/, '')
        .trim() || null;
    if (type !== null) type = singular[type] ?? type;
    const oneOf = /one of/.test(parenthetical) ? names(parenthetical) : undefined;
    const maxItems = /at most (\d+)/.exec(parenthetical)?.[1];
    return listed.map((name) => ({
      name,
      type,
      required,
      ...(oneOf ? { oneOf } : {}),
      ...(maxItems ? { maxItems: Number(maxItems) } : {}),
    }));
  });
}

/** The event-specific properties of each event the properties table names (several names share a row). */
function specProperties(): Map<string, SpecProperty[]> {
  const out = new Map<string, SpecProperty[]>();
  for (const [events, cell] of tableAfter(spec, '| Event | Properties |')) {
    const properties = cell === 'only the common properties' ? [] : parseProperties(cell!);
    for (const event of events!.split(',').map((name) => name.trim())) out.set(event, properties);
  }
  return out;
}

/** The common properties' requiredness paragraph of §C. */
function specCommon() {
  const paragraph = spec.split('\n').find((line) => line.startsWith('Common object properties in payloads:'));
  assert.ok(paragraph, 'the spec has the common properties paragraph');
  const list = (pattern: RegExp) => {
    const match = pattern.exec(paragraph);
    assert.ok(match, `the paragraph says ${pattern}`);
    return names(match[1]!);
  };
  return {
    common: names(/^Common object properties in payloads: ([^(]+)\(all objects\)/.exec(paragraph)![1]!),
    repositoryOptionalIn: list(/`repository` is optional in ([^;]+);/),
    senderOptionalIn: list(/`sender` is optional in ([^;]+);/),
    organizationRequiredIn: list(/`organization` is required in ([^;]+);/),
    installationRequiredIn: list(/`installation` is required in ([^.]+)\./),
  };
}

const letters = webhookTypeLetters as Record<string, string>;

/** Every difference between a catalogue and the spec's text; empty when they agree. */
function differences(catalogue: readonly WebhookEvent[]): string[] {
  const out: string[] = [];
  const events = specEvents();
  const properties = specProperties();
  const common = specCommon();
  const amb28 = names(/AMB-28 \(HOOK\):[^\n]*such as ([^;]*);/.exec(rules)?.[1] ?? '');
  const specified = catalogue.filter((event) => event.specified);
  const diff = (what: string, actual: unknown, expected: unknown) => {
    try {
      assert.deepEqual(actual, expected);
    } catch {
      out.push(`${what}: catalogue ${JSON.stringify(actual)}, spec ${JSON.stringify(expected)}`);
    }
  };
  diff(
    "event names, in the table's order",
    specified.map((event) => event.name),
    events.map((event) => event.name),
  );
  for (const row of events) {
    const entry = catalogue.find((event) => event.name === row.name);
    if (entry === undefined) continue;
    diff(
      `${row.name} availability`,
      entry.availability === null ? null : [...entry.availability].sort(),
      row.availability === null ? null : row.availability.map((letter) => letters[letter]).sort(),
    );
    diff(`${row.name} permission`, entry.permission, row.permission);
    diff(`${row.name} notes`, entry.notes, row.notes);
    const notShown = [
      ...(row.availability === null ? ['availability'] : []),
      ...(row.permissionShown ? [] : ['permission']),
      ...(properties.has(row.name) ? [] : ['properties']),
    ];
    diff(`${row.name} not shown`, [...entry.notShown], notShown);

    const own = properties.get(row.name) ?? [];
    const commonNamed = new Set(own.map((property) => property.name));
    for (const property of own) {
      const actual = entry.properties.find((candidate) => candidate.name === property.name);
      if (actual === undefined) {
        out.push(`${row.name}.${property.name}: not in the catalogue`);
        continue;
      }
      const requiredness = actual.required ? 'always' : actual.requiredForActions !== undefined ? 'for some actions' : 'optional';
      diff(
        `${row.name}.${property.name}`,
        { type: actual.type, required: requiredness, oneOf: actual.oneOf, maxItems: actual.maxItems },
        { type: property.type, required: property.required, oneOf: property.oneOf, maxItems: property.maxItems },
      );
    }
    const extra = entry.properties.filter((property) => !property.common && !commonNamed.has(property.name)).map((property) => property.name);
    diff(`${row.name} properties the spec does not name`, extra, []);
    // The common properties, each with the paragraph's requiredness for this event (unless the row says it again).
    for (const name of common.common) {
      if (commonNamed.has(name)) continue;
      const actual = entry.properties.find((property) => property.name === name);
      if (actual === undefined) {
        out.push(`${row.name}.${name}: the common property is not in the catalogue`);
        continue;
      }
      let required = false;
      if (name === 'repository') required = !common.repositoryOptionalIn.includes(row.name) && !amb28.includes(row.name);
      if (name === 'sender') required = !common.senderOptionalIn.includes(row.name);
      if (name === 'organization') required = common.organizationRequiredIn.includes(row.name);
      if (name === 'installation') required = common.installationRequiredIn.includes(row.name);
      diff(`${row.name}.${name} (common)`, { type: actual.type, required: actual.required, common: actual.common }, { type: 'object', required, common: true });
    }
  }
  for (const name of properties.keys()) if (!events.some((event) => event.name === name)) out.push(`${name}: in the properties table but not the Events table`);
  return out;
}

describe("webhooks: the event catalogue matches the specification's tables", () => {
  it("HOOK-WEBHOOK-TYPES, HOOK-PERMISSION-READ, HOOK-COMMON-PROPS, HOOK-REQ-DEFAULT, HOOK-REQ-REPOSITORY-OPTIONAL, HOOK-REQ-SENDER-OPTIONAL, HOOK-REQ-ORGANIZATION-REQUIRED, HOOK-REQ-INSTALLATION-REQUIRED, HOOK-EV-*: every event, its availability, permission, notes and top-level properties are the spec's", () => {
    assert.deepEqual(differences(webhookEvents), []);
  });

  it("HOOK-EV-*: the Events table has 46 rows, one HOOK-EV rule each; the catalogue has those 46 and GitHub's ping (specified: false)", () => {
    const rows = specEvents();
    assert.equal(rows.length, 46);
    const ruleEvents = [...rules.matchAll(/^- HOOK-EV-[A-Z0-9-]+: `(\w+)`/gm)].map((match) => match[1]);
    assert.deepEqual(
      ruleEvents,
      rows.map((row) => row.name),
    );
    assert.equal(webhookEvents.filter((event) => event.specified).length, 46);
    assert.deepEqual(
      webhookEvents.filter((event) => !event.specified).map((event) => event.name),
      ['ping'],
    );
    assert.equal(new Set(webhookEvents.map((event) => event.name)).size, webhookEvents.length, 'no name twice');
  });

  it('HOOK-EV-GOLLUM: gollum is in the catalogue with its availability, permission and own properties not shown; only the common defaults apply', () => {
    const gollum = eventNamed('gollum')!;
    assert.equal(gollum.availability, null);
    assert.equal(gollum.permission, null);
    assert.deepEqual([...gollum.notShown], ['availability', 'permission', 'properties']);
    assert.deepEqual(
      gollum.properties.filter((property) => property.required).map((property) => property.name),
      ['repository', 'sender'],
    );
    assert.ok(gollum.properties.every((property) => property.common));
  });

  it('HOOK-REQ-REPOSITORY-OPTIONAL (AMB-28): the four events AMB-28 names as having no repository scope do not require repository, and say why', () => {
    const amb28 = names(/AMB-28 \(HOOK\):[^\n]*such as ([^;]*);/.exec(rules)![1]!);
    assert.deepEqual([...amb28].sort(), [...commonRequiredness.repositoryOptionalByChoice].sort());
    for (const name of amb28) {
      const repository = eventNamed(name)!.properties.find((property) => property.name === 'repository')!;
      assert.equal(repository.required, false, name);
      assert.match(repository.note ?? '', /AMB-28/, name);
    }
  });

  it('HOOK-EV-DISCUSSION, HOOK-EV-PULL-REQUEST: answer is required for answered, assignee for assigned and unassigned — optional otherwise', () => {
    const answer = eventNamed('discussion')!.properties.find((property) => property.name === 'answer')!;
    assert.deepEqual({ required: answer.required, for: answer.requiredForActions }, { required: false, for: ['answered'] });
    const assignee = eventNamed('pull_request')!.properties.find((property) => property.name === 'assignee')!;
    assert.deepEqual(
      { required: assignee.required, type: assignee.type, for: assignee.requiredForActions },
      { required: false, type: 'object or null', for: ['assigned', 'unassigned'] },
    );
  });

  it('the comparison finds a wrong entry: a letter, a permission, a type, an R, a common exception or a missing event each fail it', () => {
    const mutate = (name: string, change: (event: Record<string, unknown>) => void) =>
      webhookEvents.map((event) => {
        if (event.name !== name) return event;
        const copy = structuredClone(event) as unknown as Record<string, unknown>;
        change(copy);
        return copy as unknown as WebhookEvent;
      });
    const property = (event: Record<string, unknown>, name: string) => (event.properties as Array<Record<string, unknown>>).find((p) => p.name === name)!;
    const cases: Array<[string, readonly WebhookEvent[], RegExp]> = [
      [
        'availability',
        mutate('fork', (e) => {
          e.availability = ['repositories', 'organizations', 'apps'];
        }),
        /^fork availability/,
      ],
      [
        'permission',
        mutate('check_suite', (e) => {
          e.permission = 'Checks (repository)';
        }),
        /^check_suite permission/,
      ],
      [
        'type',
        mutate('status', (e) => {
          property(e, 'id').type = 'number';
        }),
        /^status\.id/,
      ],
      [
        'R',
        mutate('star', (e) => {
          property(e, 'starred_at').required = false;
        }),
        /^star\.starred_at/,
      ],
      [
        'enum',
        mutate('status', (e) => {
          property(e, 'state').oneOf = ['success'];
        }),
        /^status\.state/,
      ],
      [
        'sender exception',
        mutate('push', (e) => {
          property(e, 'sender').required = true;
        }),
        /^push\.sender \(common\)/,
      ],
      [
        'installation exception',
        mutate('repository_dispatch', (e) => {
          property(e, 'installation').required = false;
        }),
        /^repository_dispatch\.installation/,
      ],
      [
        'an invented property',
        mutate('release', (e) => {
          (e.properties as unknown[]).push({ name: 'tag', type: 'string', required: true, common: false });
        }),
        /^release properties the spec does not name/,
      ],
      ['a missing event', webhookEvents.filter((event) => event.name !== 'sub_issues'), /^event names/],
    ];
    for (const [what, catalogue, expected] of cases) {
      const found = differences(catalogue);
      assert.ok(
        found.some((line) => expected.test(line)),
        `${what}: ${JSON.stringify(found)}`,
      );
    }
  });

  it('eventNamed: an entry by name, undefined for an unknown or inherited name, a UsageError naming eventNamed for a non-string', () => {
    assert.equal(eventNamed('push')?.name, 'push');
    assert.equal(eventNamed('issues'), undefined);
    assert.equal(eventNamed('constructor'), undefined);
    assert.equal(eventNamed('__proto__'), undefined);
    assert.throws(
      () => eventNamed(42 as never),
      (error: unknown) => error instanceof UsageError && /^eventNamed: name must be/.test(error.message),
    );
    assert.ok(Object.isFrozen(webhookEvents) && Object.isFrozen(webhookEvents[0]) && Object.isFrozen(webhookEvents[0]!.properties));
  });
});
