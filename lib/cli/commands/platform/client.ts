// The platform client as the commands build it — `gantry platform …` and `gantry gate --commit-status` — and what
// they check before sending. Light at load: lib/platform (and with it the HTTP core) is imported when a command runs.
import type { Logger } from '../../../log.js';
import { ExitCode, GantryError } from '../../../errors.js';
import type { PlatformClient } from '../../../platform/index.js';
import { usage } from '../../context.js';

export const PLATFORM_TOKEN_HELP = `The token is read from GANTRY_PLATFORM_TOKEN, else PLATFORM_TOKEN (a workflow's token) — never from a flag:
a command line is visible to every user of the machine (ps, /proc). Without one the calls are unauthenticated
(60 an hour). The API address is --api-url, else PLATFORM_API_URL (\`gantry dev\` prints both). Budgets shared with
other workers through Redis: GANTRY_PLATFORM_LIMITS_URL=redis://… (also never a flag: the address carries a password).`;

export const PLATFORM_EXIT_HELP = `Exit codes: 0 success; 1 the platform said no (401 renew the token, 403, 404, 422);
2 bad input, nothing sent; 3 the platform failed or a rate limit outlasted the waits allowed (after the retries that are safe).`;

export const PLATFORM_APP_HELP = `As an app: --installation <id> (else GANTRY_APP_INSTALLATION_ID) acts as that installation of the app
GANTRY_APP_ID, with tokens the app's private key gets and renews (the token variables are then not used); --as-app
acts as the app itself (its JWT; for /app and /app/installations). The key: GANTRY_APP_PRIVATE_KEY_FILE (a PEM file),
GANTRY_APP_PRIVATE_KEY (the PEM text), or GANTRY_APP_PRIVATE_KEY_SECRET=<mount>/<path>#<field> read from the kv engine
(SECRETS_ADDR, SECRETS_TOKEN). \`gantry dev\` prints an app's id, installation and key file.`;

/** Who the command acts as: the token variables (default), an app's installation, or the app itself. */
export interface PlatformAuthFlags {
  installation?: string | undefined;
  asApp?: boolean | undefined;
}

export interface PlatformSession {
  client: PlatformClient;
  /** Releases the client's sockets, and the app's when acting as one. */
  close(): void;
}

/** `<mount>/<path>#<field>` of GANTRY_APP_PRIVATE_KEY_SECRET, read from the kv engine (v1 or v2). */
async function appKeyFromSecrets(reference: string, env: NodeJS.ProcessEnv): Promise<string> {
  const match = /^([^/#\s]+)\/([^#\s]+)#([^#\s]+)$/.exec(reference.trim());
  if (!match)
    throw usage(
      `GANTRY_APP_PRIVATE_KEY_SECRET: "${reference.slice(0, 120)}" is not <mount>/<path>#<field>`,
      'e.g. GANTRY_APP_PRIVATE_KEY_SECRET=secret/ci/platform-app#private_key',
    );
  const [, mount, name, field] = match as unknown as [string, string, string, string];
  const { SecretsClient } = await import('../../../secrets/index.js');
  const secrets = new SecretsClient({ sources: { env } });
  try {
    const read = await secrets.kv(mount).read(name);
    const value = read.state === 'current' ? read.data[field] : undefined;
    if (typeof value !== 'string' || value.trim() === '') {
      throw new GantryError(
        `GANTRY_APP_PRIVATE_KEY_SECRET: ${mount}/${name} ${read.state === 'current' ? `has no text field ${field}` : `is ${read.state}`} in the kv engine`,
        { exitCode: ExitCode.checkFailed, code: 'PLATFORM_APP_KEY_NOT_FOUND', hint: `write it with: gantry secrets put ${mount}/${name} ${field}=@app.pem` },
      );
    }
    return value;
  } finally {
    secrets.close();
  }
}

/**
 * The client a command uses: for \`--api-url\` or PLATFORM_API_URL (a usage error, exit 2, naming both when neither is
 * set), acting with the token variables, or as an app's installation or the app itself.
 */
export async function platformClientFor(
  apiUrl: string | undefined,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  auth: PlatformAuthFlags = {},
): Promise<PlatformSession> {
  const baseUrl = apiUrl ?? (env.PLATFORM_API_URL || undefined);
  if (baseUrl === undefined)
    throw usage(
      'no platform API address: pass --api-url or set PLATFORM_API_URL',
      'e.g. PLATFORM_API_URL=https://api.platform.example (`gantry dev` serves one locally and prints it)',
    );
  const installation = auth.installation ?? (env.GANTRY_APP_INSTALLATION_ID || undefined);
  if (auth.installation !== undefined && auth.asApp)
    throw usage('--installation and --as-app contradict each other', 'give --installation to act as an installation, --as-app to act as the app itself');
  if (installation !== undefined && !/^[1-9]\d{0,18}$/.test(installation.trim())) {
    throw usage(
      `${auth.installation !== undefined ? '--installation' : 'GANTRY_APP_INSTALLATION_ID'}: "${installation.slice(0, 40)}" is not an installation id`,
      "the installation's number, as the platform shows it (GET /app/installations with --as-app lists them)",
    );
  }
  const { PlatformApp, PlatformClient } = await import('../../../platform/index.js');
  if (!auth.asApp && installation === undefined) {
    const client = new PlatformClient({ baseUrl, env, logger });
    return { client, close: () => client.close() };
  }
  if (!env.GANTRY_APP_ID)
    throw usage(
      `${auth.asApp ? '--as-app' : 'an installation'} needs the app's id in GANTRY_APP_ID`,
      "the id is on the app's settings page; `gantry dev` prints its app's",
    );
  const keySecret = env.GANTRY_APP_PRIVATE_KEY_SECRET || undefined;
  const privateKey =
    keySecret !== undefined && !env.GANTRY_APP_PRIVATE_KEY && !env.GANTRY_APP_PRIVATE_KEY_FILE ? await appKeyFromSecrets(keySecret, env) : undefined;
  const app = new PlatformApp({ baseUrl, env, logger, ...(privateKey !== undefined ? { privateKey } : {}) });
  const client = auth.asApp ? app.appClient : app.clientFor(installation!);
  return { client, close: () => app.close() };
}

export interface StatusTarget {
  repository: string;
  sha: string;
}

/** `<owner/repo>@<sha>` (the form of `gantry gate --commit-status`); a usage error naming the flag otherwise. */
export function parseStatusTarget(flag: string, value: string): StatusTarget {
  const at = value.lastIndexOf('@');
  const repository = at > 0 ? value.slice(0, at) : '';
  const sha = at > 0 ? value.slice(at + 1) : '';
  if (
    !/^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/.test(repository) ||
    repository.endsWith('/.') ||
    repository.endsWith('/..') ||
    !/^[0-9a-fA-F]{7,64}$/.test(sha)
  ) {
    throw usage(
      `${flag}: "${value.slice(0, 160)}" is not <owner/repo>@<sha>`,
      `e.g. ${flag} octo-org/site@$(git rev-parse HEAD) — the commit as a hexadecimal sha`,
    );
  }
  return { repository, sha };
}

/** The flags of a commit status, checked as the platform would check them, naming the flag (exit 2, nothing sent). */
export function checkStatusFlags(
  flags: { state?: string | undefined; context?: string | undefined; description?: string | undefined; targetUrl?: string | undefined },
  names = { context: '--context', description: '--description', targetUrl: '--target-url' },
): void {
  const states = ['error', 'failure', 'pending', 'success'];
  if (flags.state !== undefined && !states.includes(flags.state))
    throw usage(`--state: "${flags.state.slice(0, 40)}" is not a status state`, `one of ${states.join(', ')}`);
  if (flags.context !== undefined && flags.context.trim() === '')
    throw usage(`${names.context} is empty`, 'give the label that tells this status from others, e.g. gantry/gate');
  if (flags.description !== undefined) {
    const length = [...flags.description].length;
    if (length > 140)
      throw usage(`${names.description} is ${length} characters; the platform takes at most 140`, 'shorten it, or put the details behind the target URL');
  }
  if (flags.targetUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(flags.targetUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw usage(
        `${names.targetUrl}: "${flags.targetUrl.slice(0, 160)}" is not an http(s) URL`,
        'give the address of the run or report, e.g. https://ci.example/runs/42',
      );
  }
}
