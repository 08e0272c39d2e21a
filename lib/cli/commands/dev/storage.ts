// `gantry dev storage`: the embedded storage API (Drive v2 as /storage/v2) alone, with its own port, data folder,
// resumable-session lifetime, quota and faults. Its first lines on stdout are `STORAGE_BASE_URL=…` and (for a token
// it made) `STORAGE_TOKEN=…`, so that `| head -1` gets the address; then the `export …` line to paste into a shell, as
// `gantry dev` prints. The token never comes from argv. Its default port, when taken, falls back to a free one (as in
// `gantry dev`); a port asked for (--port, GANTRY_DEV_STORAGE_PORT) that is taken is exit 2.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Option, type Command } from 'commander';
import { UsageError } from '../../../errors.js';
import { DEV_STORAGE_PORT, devPort, devServerModules, startOnDevPort, type StorageFault, type StorageServerOptions } from '../../../../devserver/index.js';
import { devHostOf, devServerPort, listenAsAsked, serveAlone } from '../../serving.js';
import { exportLine } from '../../shell-quote.js';
import type { CliContext } from '../../context.js';

interface DevStorageFlags {
  port?: string;
  host?: string;
  dataDir?: string;
  token?: string;
  sessionTtl?: string;
  quota?: string;
  quotaStatus: string;
  fault: string[];
  tokenInfoUrl?: string;
}

const PORT_VARIABLE = 'GANTRY_DEV_STORAGE_PORT';
const collect = (value: string, all: string[]) => [...all, value];
/** The server's own rule for a bearer token (8–4096 printable characters, no spaces). */
const TOKEN_SHAPE = /^[\x21-\x7e]{8,4096}$/;
const MAX_TTL_SECONDS = 30 * 86_400;

/** `--session-ttl <seconds>`: whole seconds from 1 to 30 days. */
export function parseSessionTtl(raw: string): number {
  if (!/^\s*\d+\s*$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_TTL_SECONDS)
    throw new UsageError(`--session-ttl must be whole seconds from 1 to ${MAX_TTL_SECONDS} (30 days), got "${raw}"`, {
      hint: 'a resumable upload session lives one week (604800) unless told otherwise',
    });
  return Number(raw) * 1000;
}

/** `--quota <n>/<window>`: requests allowed per window, the window in seconds or with a unit (s, m, h): 100/60s, 5/1m. */
export function parseStorageQuota(raw: string): { requests: number; windowMs: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*([smh]?)\s*$/.exec(raw);
  const unit = { '': 1, s: 1, m: 60, h: 3600 }[match?.[3] ?? ''] ?? 1;
  const requests = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]) * unit;
  if (!match || requests > 1_000_000 || windowSeconds < 1 || windowSeconds > 86_400) {
    throw new UsageError(`--quota takes <requests>/<window>, e.g. 100/60s (0 to 1000000 requests, a window from 1 s to 24 h), got "${raw}"`);
  }
  return { requests, windowMs: windowSeconds * 1000 };
}

/** The bearer token: STORAGE_TOKEN when set (checked, never echoed), else none (the server makes one). */
export function tokenFromEnvironment(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = env.STORAGE_TOKEN;
  if (token === undefined || token === '') return undefined;
  if (!TOKEN_SHAPE.test(token))
    throw new UsageError('STORAGE_TOKEN must be 8 to 4096 printable characters without spaces', {
      hint: 'unset STORAGE_TOKEN to have a token made and printed, or export a longer one',
    });
  return token;
}

/**
 * The folder the state persists in, checked before anything listens: created when missing, and either empty or one a
 * storage server wrote (state.json) — the server tidies `uploads/` at start, which must never touch someone's files.
 */
async function dataFolder(raw: string): Promise<string> {
  if (raw.trim() === '') throw new UsageError('--data-dir is empty: give a folder to keep the files in (created when missing)');
  const { ensureFolder } = await import('../../../local-paths.js');
  const folder = await ensureFolder(raw, 'the data folder (--data-dir)');
  const entries = await readdir(folder);
  if (entries.length > 0 && !entries.includes('state.json')) {
    throw new UsageError(`--data-dir ${folder} holds other files and no state.json: it is not a storage server's folder`, {
      hint: 'give a new or empty folder, or one an earlier gantry dev storage kept its state in',
    });
  }
  return folder;
}

function checkTokenInfoUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) {
    throw new UsageError(`--token-info-url must be an http(s) URL without query, fragment or user, got "${raw.slice(0, 120)}"`, {
      hint: 'e.g. --token-info-url http://127.0.0.1:5762/tokeninfo',
    });
  }
  return url.href;
}

export function registerDevStorage(dev: Command, context: CliContext): void {
  dev
    .command('storage')
    .description(
      'serve the storage API (Drive v2 as /storage/v2: all 70 methods, resumable uploads, watch channels) and print STORAGE_BASE_URL and STORAGE_TOKEN',
    )
    .option('--port <port>', `port to listen on (0 = any free port; default GANTRY_DEV_STORAGE_PORT or ${DEV_STORAGE_PORT})`)
    .option('--host <address>', 'the loopback address to listen on (127.0.0.1, ::1, localhost; default 127.0.0.1)')
    .option('--data-dir <folder>', 'keep files and state in this folder across runs (default: a new temporary folder, removed on exit)')
    .option('--session-ttl <seconds>', 'how long a resumable upload session lives (default 604800, a week, as Drive)')
    .option('--quota <n/window>', 'answer requests beyond n per window with a rate-limit error, e.g. 100/60s')
    .option('--quota-status <status>', 'the rate-limit answer: 403 (userRateLimitExceeded) or 429 (rateLimitExceeded)', '403')
    .option(
      '--token-info-url <url>',
      "also accept an authorization server's access tokens with a storage scope, asked of this tokeninfo endpoint (e.g. http://127.0.0.1:5762/tokeninfo of gantry dev oauth)",
    )
    .option(
      '--fault <json>',
      'arm a fault at start (repeatable), e.g. \'{"kind":"status","status":503,"times":1}\' or \'{"kind":"cut","afterBytes":1048576}\'',
      collect,
      [] as string[],
    )
    // Refused with a reason rather than "unknown option": a token on the command line is visible to every user (ps).
    .addOption(new Option('--token <value>').hideHelp())
    .addHelpText(
      'after',
      '\nThe bearer token is STORAGE_TOKEN from the environment, or a new one printed as STORAGE_TOKEN=… (never a flag: argv is visible to\nother users). Admin endpoints under <url>/_gantry/: faults, stats, sessions, notifications (see docs/storage.md).',
    )
    .action(async (flags: DevStorageFlags, command: Command) => {
      if (flags.token !== undefined)
        throw new UsageError('--token is not accepted: a token on the command line is visible to other users of this machine (ps, shell history)', {
          hint: 'export STORAGE_TOKEN=<token> before gantry dev storage, or leave it unset to have one made and printed',
        });
      const { json } = context.globals(command);
      const host = devHostOf(command);
      const port = devServerPort(flags.port, PORT_VARIABLE, DEV_STORAGE_PORT);
      // Asked for (--port, or the variable) and taken is an error; the default port taken falls back to a free one.
      const portFrom = flags.port !== undefined ? '--port' : devPort(PORT_VARIABLE, DEV_STORAGE_PORT).explicit ? PORT_VARIABLE : undefined;
      const sessionTtlMs = flags.sessionTtl !== undefined ? parseSessionTtl(flags.sessionTtl) : undefined;
      if (flags.quotaStatus !== '403' && flags.quotaStatus !== '429') throw new UsageError(`--quota-status must be 403 or 429, got "${flags.quotaStatus}"`);
      const { checkStorageFault, startStorageServer } = await devServerModules.storage();
      const faults: StorageFault[] = flags.fault.map((text) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new UsageError(`--fault ${text}: not JSON`, { hint: 'e.g. --fault \'{"kind":"status","status":503,"times":1}\'' });
        }
        try {
          return checkStorageFault(parsed);
        } catch (error) {
          throw new UsageError(`--fault ${text}: ${(error as Error).message}`);
        }
      });
      if (flags.quota !== undefined) {
        const status = flags.quotaStatus === '429' ? 429 : 403;
        faults.push({ kind: 'quota', ...parseStorageQuota(flags.quota), status, reason: status === 429 ? 'rateLimitExceeded' : 'userRateLimitExceeded' });
      }
      const token = tokenFromEnvironment();
      const temporary = flags.dataDir === undefined;
      const dir = temporary ? await mkdtemp(path.join(tmpdir(), 'gantry-dev-storage-')) : await dataFolder(flags.dataDir!);
      const options: StorageServerOptions = {
        host,
        port,
        dir,
        faults,
        ...(token !== undefined ? { token } : {}),
        ...(sessionTtlMs !== undefined ? { sessionTtlMs } : {}),
        ...(flags.tokenInfoUrl !== undefined ? { tokenInfoUrl: checkTokenInfoUrl(flags.tokenInfoUrl) } : {}),
        log: (line) => context.logger.debug(line),
      };
      let server: Awaited<ReturnType<typeof startStorageServer>>;
      try {
        server = await listenAsAsked({ host, port, portFlag: portFrom ?? '--port' }, () =>
          portFrom !== undefined
            ? startStorageServer(options)
            : startOnDevPort({ name: 'storage API', host, port, explicit: false, variable: PORT_VARIABLE }, (p) => startStorageServer({ ...options, port: p })),
        );
      } catch (error) {
        if (temporary) await rm(dir, { recursive: true, force: true });
        throw error;
      }
      const env: Record<string, string> = { STORAGE_BASE_URL: server.url, ...(token === undefined ? { STORAGE_TOKEN: server.tokens[0]! } : {}) };
      const where = temporary ? `${dir} (temporary: removed on exit; --data-dir keeps the state)` : dir;
      const stop = async () => {
        await server.stop();
        if (temporary) await rm(dir, { recursive: true, force: true });
      };
      await serveAlone(
        context.out,
        json,
        { name: server.name, url: server.url, stop },
        {
          json: () => ({ dataDir: dir, temporary, tokenFrom: token === undefined ? 'generated' : 'STORAGE_TOKEN', env }),
          text() {
            for (const [key, value] of Object.entries(env)) context.out.line(`${key}=${value}`);
            context.out.line(exportLine(env));
            context.out.line(`storage API on ${server.url} (/storage/v2, uploads at /upload/storage/v2); state in ${where}`);
            context.out.line(
              token === undefined
                ? 'token: made for this run (paste the export line above; STORAGE_TOKEN set beforehand is used instead)'
                : 'token: STORAGE_TOKEN from the environment',
            );
          },
        },
      );
    });
}
