/**
 * `gantry platform`: the hosting platform's REST API through `PlatformClient` — its limits, retries and redaction —
 * as `gh api` does for GitHub (`api`), the rate limits as the platform and the client see them (`rate-limit`), and a
 * commit status (`status`). lib/platform is imported inside the actions, so `gantry --help` loads none of it.
 */
import { terminalText } from '../../../terminal-text.js';
import type { Command } from 'commander';
import type { PlatformBudgets } from '../../../platform/index.js';
import { sensitiveHeaders } from '../../../redact.js';
import { usage, type CliContext } from '../../context.js';
import { checkStatusFlags, PLATFORM_APP_HELP, PLATFORM_EXIT_HELP, PLATFORM_TOKEN_HELP, platformClientFor, type PlatformAuthFlags } from './client.js';

interface ApiFlags extends PlatformAuthFlags {
  method?: string;
  field: string[];
  header: string[];
  paginate?: boolean;
  apiUrl?: string;
}

interface StatusFlags extends PlatformAuthFlags {
  state: string;
  context: string;
  description?: string;
  targetUrl?: string;
  apiUrl?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** `-f key=value` fields into an object: `key[]=v` appends to an array, as `gh api` reads it. */
export function parseFields(fields: readonly string[]): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const field of fields) {
    const eq = field.indexOf('=');
    if (eq <= 0) throw usage(`-f: "${field.slice(0, 80)}" is not key=value`, 'e.g. -f state=open (repeat -f for more fields)');
    const key = field.slice(0, eq);
    const value = field.slice(eq + 1);
    if (key.endsWith('[]')) {
      const name = key.slice(0, -2);
      const existing = result[name];
      if (typeof existing === 'string') throw usage(`-f: ${name} is given both as a value and as a list (${name}[])`);
      result[name] = [...(existing ?? []), value];
    } else {
      if (key in result) throw usage(`-f: ${key} is given twice`, `give it once, or as ${key}[]=… for a list`);
      result[key] = value;
    }
  }
  return result;
}

/**
 * `-H 'Name: value'` headers, as `gh api -H` reads them (e.g. the platform's media type in Accept). Never credentials:
 * a command line is visible to every user of the machine, and the token variables give the credential.
 */
export function parseHeaders(headers: readonly string[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const header of headers) {
    const colon = header.indexOf(':');
    const name = colon > 0 ? header.slice(0, colon).trim().toLowerCase() : '';
    // Only the first word is shown: `-H 'Authorization ghp_…'` (the colon forgotten) must not print the token.
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name))
      throw usage(`-H: "${header.trim().split(/[\s:]/)[0]!.slice(0, 40)}…" is not Name: value`, "e.g. -H 'Accept: application/vnd.github+json'");
    if (sensitiveHeaders.has(name))
      throw usage(
        `-H: ${name} is not taken on the command line: anyone on the machine can read it`,
        'the token comes from GANTRY_PLATFORM_TOKEN or PLATFORM_TOKEN',
      );
    result[name] = header.slice(colon + 1).trim();
  }
  return result;
}

function resetTime(reset: unknown): string | undefined {
  return typeof reset === 'number' && Number.isFinite(reset) ? new Date(reset * 1000).toISOString() : undefined;
}

/** The rows of `gantry platform rate-limit`'s second table: what the client keeps before sending. */
function secondaryRows(budgets: PlatformBudgets): Array<{ budget: string; limit: number; used: number; remaining: number }> {
  const { kept, limits } = budgets;
  const row = (budget: string, limit: number, used: number) => ({ budget, limit, used, remaining: Math.max(0, limit - used) });
  return [
    row('requests in flight (RATE-SEC-CONCURRENCY)', limits.concurrency, kept.inFlight),
    row('creations this minute (RATE-SEC-CONTENT-CREATION)', limits.creationsPerMinute, kept.creationsLastMinute),
    row('creations this hour (RATE-SEC-CONTENT-CREATION)', limits.creationsPerHour, kept.creationsLastHour),
    row('CPU estimate ms this minute (RATE-SEC-CPU-TIME)', limits.cpuMsPerMinute, Math.round(kept.cpuMsLastMinute)),
    ...Object.entries(kept.points).map(([endpoint, used]) => row(`points this minute: ${endpoint} (RATE-SEC-POINTS-REST)`, limits.pointsPerMinute, used)),
  ];
}

export function register(program: Command, context: CliContext): void {
  const platform = program
    .command('platform')
    .description("the hosting platform's REST API within its rate limits: any call, the limits, commit statuses")
    .addHelpText('after', `\n${PLATFORM_TOKEN_HELP}\n${PLATFORM_APP_HELP}\n${PLATFORM_EXIT_HELP}`);

  platform
    .command('api <path>')
    .description("call the REST API as `gh api` does, through Gantry's client (rate limits kept, retries, redaction); prints the answer's JSON")
    .option('-X, --method <method>', 'the HTTP method (default GET, or POST when fields are given)')
    .option('-f, --field <key=value>', 'a string field, repeatable (key[]=v for a list): the JSON body, or the query of a GET', collect, [])
    .option('-H, --header <name:value>', "a request header, repeatable, e.g. 'Accept: application/vnd.github+json' (never credentials)", collect, [])
    .option('--paginate', 'follow the Link header\'s rel="next" and print every page\'s items as one JSON array')
    .option('--api-url <url>', 'the REST API address (default PLATFORM_API_URL)')
    .option('--installation <id>', 'act as this installation of the app GANTRY_APP_ID (default GANTRY_APP_INSTALLATION_ID)')
    .option('--as-app', 'act as the app itself, with its JWT (for /app and /app/installations)')
    .addHelpText(
      'after',
      `
Examples:
  gantry platform api /repos/gantry/demo
  gantry platform api /repos/gantry/demo/issues -f title="Broken link" -f labels[]=bug     (POST)
  gantry platform api /repos/gantry/demo/issues -X GET -f state=open --paginate
  gantry platform api /rate_limit | head -1
  gantry platform api /repos/gantry/demo -H 'Accept: application/vnd.github+json' -H 'X-GitHub-Api-Version: 2022-11-28'
  gantry platform api /app/installations --as-app
  gantry platform api /installation/repositories --installation 1

${PLATFORM_TOKEN_HELP}
${PLATFORM_APP_HELP}
${PLATFORM_EXIT_HELP}`,
    )
    .action(async (rawPath: string, flags: ApiFlags, command: Command) => {
      const { json } = context.globals(command);
      const fields = parseFields(flags.field);
      const headers = parseHeaders(flags.header);
      const method = (flags.method ?? (Object.keys(fields).length > 0 ? 'POST' : 'GET')).toUpperCase();
      const path = rawPath.startsWith('/') || /^https?:/i.test(rawPath) ? rawPath : `/${rawPath}`;
      if (flags.paginate && method !== 'GET')
        throw usage(`--paginate pages through a GET; the method here is ${method}`, 'add -X GET (fields then go into the query)');
      const inQuery = method === 'GET' || method === 'HEAD';
      const { client, close } = await platformClientFor(flags.apiUrl, context.logger, process.env, flags);
      try {
        let body: unknown;
        if (flags.paginate) {
          const items: unknown[] = [];
          for await (const item of client.paginate(path, { query: toQuery(fields), headers })) items.push(item);
          body = items;
        } else {
          const query = inQuery && Object.keys(fields).length > 0 ? toQuery(fields) : undefined;
          const response = await client.request(method, path, {
            headers,
            ...(query ? { query } : {}),
            ...(!inQuery && Object.keys(fields).length > 0 ? { body: fields } : {}),
          });
          body = response.body;
        }
        if (typeof body === 'string' && !json) context.out.line(body);
        else if (body !== undefined) context.out.json(body);
      } finally {
        close();
      }
    });

  platform
    .command('rate-limit')
    .description("each resource's limit, used, remaining and reset (GET /rate_limit, which spends no primary budget), and the secondary budgets Gantry keeps")
    .option('--api-url <url>', 'the REST API address (default PLATFORM_API_URL)')
    .option('--installation <id>', 'as this installation of the app GANTRY_APP_ID (default GANTRY_APP_INSTALLATION_ID)')
    .addHelpText('after', `\n${PLATFORM_TOKEN_HELP}\n${PLATFORM_APP_HELP}\n${PLATFORM_EXIT_HELP}`)
    .action(async (flags: { apiUrl?: string } & PlatformAuthFlags, command: Command) => {
      const { json } = context.globals(command);
      const { out } = context;
      const { client, close } = await platformClientFor(flags.apiUrl, context.logger, process.env, flags);
      try {
        const answer = (await client.rateLimit()) as
          { resources?: Record<string, { limit?: number; used?: number; remaining?: number; reset?: number }> } | undefined;
        const resources = Object.entries(answer?.resources ?? {}).map(([resource, r]) => ({
          resource,
          limit: r.limit,
          used: r.used,
          remaining: r.remaining,
          reset: resetTime(r.reset),
        }));
        const budgets = await client.budgets();
        const secondary = secondaryRows(budgets);
        const identity = {
          kind: budgets.identity.kind,
          inferredFrom: budgets.identity.inferredFrom,
          enterprise: budgets.identity.enterprise,
          expectedPerHour: budgets.identity.expectedPerHour,
          per: budgets.identity.per,
        };
        if (json) {
          out.json({ resources, identity, secondary, limits: budgets.limits });
          return;
        }
        out.table(resources, [
          { header: 'resource', value: (r) => r.resource },
          { header: 'limit', value: (r) => r.limit, align: 'right' },
          { header: 'used', value: (r) => r.used, align: 'right' },
          { header: 'remaining', value: (r) => r.remaining, align: 'right' },
          { header: 'reset', value: (r) => r.reset },
        ]);
        out.line();
        out.line(`identity: ${identity.kind} (${identity.inferredFrom}), ${identity.expectedPerHour} an hour expected per ${identity.per}`);
        out.line();
        out.table(secondary, [
          { header: 'secondary budget (kept by this process)', value: (r) => r.budget },
          { header: 'limit', value: (r) => r.limit, align: 'right' },
          { header: 'used', value: (r) => r.used, align: 'right' },
          { header: 'remaining', value: (r) => r.remaining, align: 'right' },
        ]);
      } finally {
        close();
      }
    });

  platform
    .command('status <repository> <sha>')
    .description('set a commit status: <repository> as owner/repo, <sha> the commit')
    .requiredOption('--state <state>', 'error, failure, pending or success')
    .requiredOption('--context <context>', 'the label that tells this status from others, e.g. gantry/gate')
    .option('--description <text>', 'a short summary, at most 140 characters')
    .option('--target-url <url>', 'an http(s) address with the details (a run, a report)')
    .option('--api-url <url>', 'the REST API address (default PLATFORM_API_URL)')
    .option('--installation <id>', 'as this installation of the app GANTRY_APP_ID (default GANTRY_APP_INSTALLATION_ID)')
    .addHelpText(
      'after',
      `
Checked before anything is sent (exit 2): the state, the repository, an empty context, a description over 140
characters, a target URL that is no http(s) URL.

${PLATFORM_TOKEN_HELP}
${PLATFORM_APP_HELP}
${PLATFORM_EXIT_HELP}`,
    )
    .action(async (repository: string, sha: string, flags: StatusFlags, command: Command) => {
      const { json } = context.globals(command);
      checkStatusFlags(flags);
      const { commitStatusBody } = await import('../../../platform/index.js');
      const input = { repository, sha, state: flags.state as 'success', context: flags.context, description: flags.description, targetUrl: flags.targetUrl };
      commitStatusBody(input, 'gantry platform status');
      const { client, close } = await platformClientFor(flags.apiUrl, context.logger, process.env, flags);
      try {
        const status = await client.createCommitStatus(input);
        if (json) context.out.json({ repository, sha, ...status });
        else
          context.out.line(
            `${terminalText(status.state)} for ${terminalText(status.context)} on ${repository}@${sha.slice(0, 12)}${status.id !== undefined ? ` (status ${status.id})` : ''}`,
          );
      } finally {
        close();
      }
    });
}

function toQuery(fields: Record<string, string | string[]>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) query[key] = Array.isArray(value) ? value.join(',') : value;
  return query;
}
