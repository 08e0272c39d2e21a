// `gantry dev platform`: the embedded platform API alone, with its own port, window scale, faults and app key.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import { DEV_PLATFORM_PORT, devServerModules, type PlatformServerOptions } from '../../../../devserver/index.js';
import { checkPortFlag, checkWholeNumberFlag, devHostOf, listenAsAsked, serveAlone } from '../../serving.js';
import type { CliContext } from '../../context.js';

interface DevPlatformFlags {
  port: string;
  host?: string;
  windowScale?: string;
  latency: string;
  limitStatus: string;
  appId: string;
  appPublicKey?: string;
  installation: string[];
  fault: string[];
}

const collect = (value: string, all: string[]) => [...all, value];

export function registerDevPlatform(dev: Command, context: CliContext): void {
  dev
    .command('platform')
    .description('serve the platform REST API, enforcing the primary and secondary rate limits per identity, and print a token')
    .option('--port <port>', 'port to listen on (0 = any free port)', String(DEV_PLATFORM_PORT))
    .option('--host <address>', 'the loopback address to listen on (127.0.0.1, ::1, localhost; default 127.0.0.1)')
    .option(
      '--window-scale <factor>',
      'multiply every limit window (0.01 makes the hour 36 s; for tests); GANTRY_DEV_PLATFORM_WINDOW_SCALE also works (default 1)',
    )
    .option('--latency <ms>', 'every request takes at least this long, holding its concurrency slot', '0')
    .option('--limit-status <status>', "status of rate-limit answers: 403 (GitHub REST's) or 429", '403')
    .option('--app-id <id>', 'the app whose JWTs are accepted (with --app-public-key)', '1')
    .option('--app-public-key <file>', "PEM public key of the app's signing key: POST /app/installations/{id}/access_tokens checks its JWTs")
    .option('--installation <id:account>', 'an installation of the app on an account (repeatable; default 1:gantry)', collect, [] as string[])
    .option('--fault <json>', 'arm a fault at start (repeatable), e.g. \'{"kind":"non-json","status":502,"times":1}\'', collect, [] as string[])
    .addHelpText(
      'after',
      '\nAdmin endpoints: GET/DELETE <url>/_gantry/violations, POST <url>/_gantry/reset, GET <url>/_gantry/stats,\nGET/POST/PUT/DELETE <url>/_gantry/faults, POST <url>/_gantry/tokens {"kind": ...}, POST <url>/_gantry/tokens/revoke {"token": ...} (see docs/platform.md).',
    )
    .action(async (flags: DevPlatformFlags, command: Command) => {
      const { checkFault, devWindowScale, parseWindowScale, startPlatformServer } = await devServerModules.platform();
      const { json } = context.globals(command);
      const host = devHostOf(command);
      checkPortFlag(flags.port);
      checkWholeNumberFlag(flags.latency, '--latency', 600_000);
      if (flags.limitStatus !== '403' && flags.limitStatus !== '429') throw new UsageError(`--limit-status must be 403 or 429, got "${flags.limitStatus}"`);
      if (!/^\d+$/.test(flags.appId)) throw new UsageError(`--app-id must be a number, got "${flags.appId}"`);
      const windowScale = flags.windowScale !== undefined ? parseWindowScale(flags.windowScale, '--window-scale') : devWindowScale();
      const installations = (flags.installation.length > 0 ? flags.installation : ['1:gantry']).map((value) => {
        const match = /^(\d+):([A-Za-z0-9-]+)$/.exec(value);
        if (!match) throw new UsageError(`--installation takes <id>:<account>, e.g. 1:gantry, got "${value}"`);
        return { id: Number(match[1]), account: match[2]! };
      });
      const faults = flags.fault.map((text) => {
        try {
          return checkFault(JSON.parse(text));
        } catch (error) {
          throw new UsageError(`--fault ${text}: ${(error as Error).message}`);
        }
      });
      const status = Number(flags.limitStatus) as 403 | 429;
      const options: PlatformServerOptions = {
        host,
        port: Number(flags.port),
        windowScale,
        latencyMs: Number(flags.latency),
        limitStatus: { primary: status, secondary: status },
        faults,
        log: (line) => context.logger.debug(line),
      };
      if (flags.appPublicKey) options.apps = [{ id: Number(flags.appId), publicKey: await readFile(flags.appPublicKey, 'utf8'), installations }];
      const server = await listenAsAsked({ host, port: options.port ?? 0, portFlag: '--port' }, () => startPlatformServer(options));
      const token = server.issueToken({ kind: 'personal', login: 'dev' });
      await serveAlone(context.out, json, server, {
        json: () => ({ token, windowScale, app: flags.appPublicKey ? { id: Number(flags.appId), installations } : null }),
        text() {
          context.out.line(`platform API on ${server.url}${windowScale !== 1 ? ` (limit windows scaled by ${windowScale})` : ''}`);
          context.out.line(`token:  ${token}`);
          context.out.line(`export PLATFORM_API_URL=${server.url} GANTRY_PLATFORM_TOKEN=${token}`);
          if (!flags.appPublicKey) context.out.line('No app: give --app-public-key to accept app JWTs for installation tokens.');
        },
      });
    });
}
