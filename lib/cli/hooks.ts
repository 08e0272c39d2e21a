/**
 * `gantry hooks`: receive the platform's webhooks (`serve`), with deployment protection rules decided by gates;
 * check a saved delivery's signature (`verify`); list the event catalogue (`events`). lib/webhooks is imported inside
 * the actions, so `gantry --help` loads none of it.
 */
import { createServer } from 'node:http';
import type { Command } from 'commander';
import { ExitCode, GantryError } from '../errors.js';
import { readLocalFile } from '../local-paths.js';
import { usage, type CliContext } from './context.js';
import { untilInterrupted } from './devservers.js';

const SECRET_HELP = `The webhook secret is read from GANTRY_WEBHOOK_SECRET, and while rotating also from GANTRY_WEBHOOK_SECRETS
(comma-separated) — never from a flag: a command line is visible to every user of the machine. Deployment protection
answers as the app: GANTRY_APP_ID and its key (GANTRY_APP_PRIVATE_KEY_FILE, GANTRY_APP_PRIVATE_KEY), the platform at
PLATFORM_API_URL.`;

interface ServeFlags {
  port: string;
  host: string;
  path: string;
  config?: string;
  sha1: boolean;
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw usage(`--port must be a whole number from 0 to 65535, got "${text.slice(0, 20)}"`);
  return Number(text);
}

/** A saved delivery: an HTTP request as text (request line optional, headers, a blank line, the body's exact bytes). */
export function parseSavedDelivery(bytes: Buffer): { headers: Record<string, string>; body: Buffer } {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const [end, gap] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
  if (end < 0) throw usage('the saved delivery has no blank line between its headers and its body', 'save the request as the platform shows it: headers, a blank line, then the body exactly as sent');
  const headers: Record<string, string> = {};
  const lines = bytes.subarray(0, end).toString('latin1').split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (index === 0 && /^[A-Z]+ \S+ HTTP\/\d/.test(line)) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw usage(`the saved delivery's header line ${index + 1} is not "Name: value"`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(end + gap);
  const length = headers['content-length'];
  if (length !== undefined && /^\d+$/.test(length) && Number(length) <= body.length) body = body.subarray(0, Number(length));
  return { headers, body };
}

export function register(program: Command, context: CliContext): void {
  const hooks = program
    .command('hooks')
    .description('receive the platform\'s webhooks: deployment protection rules decided by gates, signatures checked')
    .addHelpText('after', `\n${SECRET_HELP}`);

  hooks
    .command('serve')
    .description('receive webhooks on http://<host>:<port><path>, verify each delivery, and answer deployment protection rules with a gate')
    .option('--port <port>', 'port to listen on (0 = any free port)', '3000')
    .option('--host <address>', 'address to listen on (0.0.0.0 to take deliveries from the platform)', '127.0.0.1')
    .option('--path <path>', 'the payload URL\'s path', '/hooks')
    .option('--config <file>', 'the environments\' gates (default gantry.hooks.json when it exists)')
    .option('--no-sha1', 'refuse X-Hub-Signature (sha1) deliveries: only X-Hub-Signature-256 is accepted')
    .addHelpText('after', `
One line per delivery: time, event.action, delivery GUID, the status answered, what happened, milliseconds.
Answers: 200 handled (or a redelivery of one handled), 202 still running after 9 s (the platform waits 10),
400 a missing header or malformed payload, 401 a bad signature, 413 over 25 MB, 415 not JSON or form, 500 a handler failed.

gantry.hooks.json:
  {"environments": {"production": {"urls": ["https://example.com/"], "min": {"performance": 0.9},
                                   "audits": {"largest-contentful-paint": 2500}, "runs": 3, "engine": "local"}}}

${SECRET_HELP}`)
    .action(async (flags: ServeFlags, command: Command) => {
      const { json } = context.globals(command);
      const port = parsePort(flags.port);
      if (!flags.path.startsWith('/') || /[?#\s]/.test(flags.path)) throw usage(`--path must be a path such as /hooks, got "${flags.path.slice(0, 60)}"`);
      const { WebhookReceiver, loadHooksConfig, deploymentProtection } = await import('../webhooks/index.js');
      const { existsSync } = await import('node:fs');
      const configFile = flags.config ?? (existsSync('gantry.hooks.json') ? 'gantry.hooks.json' : undefined);
      const config = configFile !== undefined ? await loadHooksConfig(configFile) : undefined;
      const receiver = new WebhookReceiver({ allowSha1: flags.sha1, logger: context.logger });
      let closeApp = () => {};
      if (config && config.environments.size > 0) {
        if (!process.env.GANTRY_APP_ID) throw usage(`${config.source} gates environments, and the answers must come from the app: set GANTRY_APP_ID and GANTRY_APP_PRIVATE_KEY_FILE (or GANTRY_APP_PRIVATE_KEY)`, 'the app is the one whose deployment protection rule the environments use');
        const { PlatformApp } = await import('../platform/index.js');
        const app = new PlatformApp({ logger: context.logger });
        closeApp = () => app.close();
        receiver.on('deployment_protection_rule.requested', deploymentProtection({ config, app, logger: context.logger }));
      }
      receiver.onDelivery((record) => {
        const line = { at: new Date().toISOString(), event: record.event, action: record.action, delivery: record.id, status: record.status, outcome: record.outcome, ms: record.ms };
        if (json) context.out.line(JSON.stringify(line));
        else context.out.line(`${line.at} ${record.event ?? '-'}${record.action ? `.${record.action}` : ''} ${record.id ?? '-'} ${record.status} ${record.outcome} ${record.ms}ms`);
      });
      const listener = receiver.middleware({ path: flags.path });
      const server = createServer((request, response) => listener(request, response, () => {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(`${JSON.stringify({ message: `deliveries go to ${flags.path}` })}\n`);
      }));
      server.requestTimeout = 60_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? usage(`port ${port} on ${flags.host} is taken`, 'choose another with --port, or 0 for any free port') : error));
        server.listen(port, flags.host, resolve);
      });
      const address = server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      const host = flags.host.includes(':') ? `[${flags.host}]` : flags.host;
      const environments = config ? [...config.environments.keys()] : [];
      context.logger.info(`receiving webhooks on http://${host}:${actualPort}${flags.path} (sha1 ${flags.sha1 ? 'accepted when no sha256 signature comes' : 'refused'}; ${environments.length > 0 ? `gating ${environments.join(', ')}` : 'no environments gated'})`);
      await untilInterrupted(async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await receiver.close();
        closeApp();
      });
    });

  hooks
    .command('verify [file]')
    .description('check a saved delivery\'s signature (the request as text: headers, a blank line, the body); reads stdin without a file')
    .requiredOption('--secret-env <variable>', 'the environment variable holding the secret (never the secret itself)')
    .option('--no-sha1', 'refuse an X-Hub-Signature (sha1) signature')
    .addHelpText('after', `
Exit codes: 0 the signature is valid (and the payload has what its event requires); 1 it is not, or the payload
lacks a required property; 2 bad input (no such variable, a file that is no saved request).

Example:
  GANTRY_WEBHOOK_SECRET=… gantry hooks verify --secret-env GANTRY_WEBHOOK_SECRET < delivery.http`)
    .action(async (file: string | undefined, flags: { secretEnv: string; sha1: boolean }, command: Command) => {
      const { json } = context.globals(command);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(flags.secretEnv)) throw usage(`--secret-env takes a variable's name, got "${flags.secretEnv.slice(0, 40)}"`, 'the secret itself never goes on the command line');
      const secret = process.env[flags.secretEnv];
      if (!secret) throw usage(`the variable ${flags.secretEnv} is not set or empty`, `export ${flags.secretEnv}=… (the webhook's secret) first`);
      const bytes = await readLocalFile(file ?? '/dev/stdin', { what: file ? 'the saved delivery' : 'the saved delivery (stdin)', maxBytes: 26 * 1024 * 1024, allowPipe: true });
      const { headers, body } = parseSavedDelivery(bytes);
      const { verify, checkPayload } = await import('../webhooks/index.js');
      const result = verify(secret, body, headers, { allowSha1: flags.sha1 });
      const event = headers['x-platform-event'];
      const delivery = headers['x-platform-delivery'];
      if (!result.ok) {
        if (json) context.out.json({ valid: false, reason: result.reason, message: result.message, event, delivery });
        throw new GantryError(`the delivery${delivery ? ` ${delivery}` : ''} is not signed with that secret: ${result.message}`, { exitCode: ExitCode.checkFailed, code: 'WEBHOOK_SIGNATURE' });
      }
      let problem: string | undefined;
      if (event) {
        let payload: unknown;
        const type = headers['content-type'] ?? '';
        try {
          payload = /x-www-form-urlencoded/i.test(type) ? JSON.parse(new URLSearchParams(body.toString('utf8')).get('payload') ?? '') : JSON.parse(body.toString('utf8'));
        } catch {
          problem = 'the body is not a JSON payload';
        }
        if (problem === undefined) {
          const check = checkPayload(event, payload);
          if (!check.ok) problem = check.message;
        }
      }
      if (json) context.out.json({ valid: true, algorithm: result.algorithm, event, delivery, ...(problem ? { payloadProblem: problem } : {}) });
      else context.out.line(`valid ${result.algorithm} signature${event ? ` on ${event}` : ''}${delivery ? ` delivery ${delivery}` : ''}`);
      if (problem) throw new GantryError(`the signature is valid but the payload is not: ${problem}`, { exitCode: ExitCode.checkFailed, code: 'WEBHOOK_PAYLOAD' });
    });

  hooks
    .command('events')
    .description('the event catalogue: each event, where it is available, the permission it needs and its required properties')
    .action(async (_flags: unknown, command: Command) => {
      const { json } = context.globals(command);
      const { webhookEvents } = await import('../webhooks/index.js');
      const rows = webhookEvents.map((event) => ({
        event: event.name,
        availability: event.availability ?? null,
        permission: event.permission,
        required: event.properties.filter((p) => p.required && !p.common).map((p) => p.name),
        notes: event.notes,
      }));
      if (json) {
        context.out.json(rows);
        return;
      }
      context.out.table(rows, [
        { header: 'event', value: (r) => r.event },
        { header: 'available to', value: (r) => (r.availability ? r.availability.join(', ') : 'not shown') },
        { header: 'permission', value: (r) => r.permission ?? '-' },
        { header: 'required', value: (r) => r.required.join(', ') || '-' },
      ]);
    });
}
