/**
 * What the client keeps between runs, none of it secret, in `<configDir>/mcp/` (0600 files in a 0700 folder, written
 * to a temporary name and renamed): `clients.json`, the dynamically registered client of each issuer (client id,
 * redirect URI — its loopback port is reused —, when), and `logins.json`, which login each context server uses (the
 * issuer, client id, token-store profile and where the tokens are). The tokens themselves are in the token store
 * `gantry auth` uses (lib/auth/store): the keyring, the kv engine or, only when asked, a private file.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { parseJsonQuietly } from '../../json-syntax.js';
import { resolveConfigDir } from '../../auth/store/index.js';
import { readPrivateFile, writePrivateFile } from '../../auth/store/files.js';

export interface RegisteredClient {
  clientId: string;
  redirectUri: string;
  tokenEndpointAuthMethod: string;
  registeredAt: string;
}

export interface LoginEntry {
  issuer: string;
  clientId: string;
  /** The token store's profile name for this issuer and resource (`mcp-<hash>`). */
  profile: string;
  /** How to open the token store again (`keyring`, `kv:<mount>/<path>`, `file`), or `custom` for one handed in. */
  store: string;
  scope: string;
  writtenAt: string;
  /** The resource the tokens were asked for, where the server's metadata names one above the URL called. */
  resource?: string;
  /** '2025-03-26' for a server of that revision (no resource metadata; its origin the authorization server). */
  revision?: '2025-03-26';
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

export class ClientState {
  readonly folder: string;

  constructor(configDir?: string, env: NodeJS.ProcessEnv = process.env) {
    this.folder = join(resolveConfigDir(configDir, env), 'mcp');
  }

  async #read(name: string): Promise<Record<string, unknown>> {
    const text = await readPrivateFile(join(this.folder, name), 'the context-client state file');
    if (text === undefined) return {};
    const parsed = parseJsonQuietly(text);
    // A broken file is state only: it is started afresh (a new registration, a new sign-in), never fatal.
    return parsed.ok && isObject(parsed.value) ? parsed.value : {};
  }

  async #update(name: string, key: string, value: unknown): Promise<void> {
    const all = await this.#read(name);
    if (value === undefined) delete all[key];
    else all[key] = value;
    await writePrivateFile(join(this.folder, name), `${JSON.stringify(all, null, 2)}\n`);
  }

  async registeredClient(issuer: string): Promise<RegisteredClient | undefined> {
    const entry = (await this.#read('clients.json'))[issuer];
    if (!isObject(entry) || typeof entry.clientId !== 'string' || typeof entry.redirectUri !== 'string') return undefined;
    return {
      clientId: entry.clientId,
      redirectUri: entry.redirectUri,
      tokenEndpointAuthMethod: typeof entry.tokenEndpointAuthMethod === 'string' ? entry.tokenEndpointAuthMethod : 'none',
      registeredAt: typeof entry.registeredAt === 'string' ? entry.registeredAt : '',
    };
  }

  async saveRegisteredClient(issuer: string, client: RegisteredClient | undefined): Promise<void> {
    await this.#update('clients.json', issuer, client);
  }

  async login(resource: string): Promise<LoginEntry | undefined> {
    const entry = (await this.#read('logins.json'))[resource];
    if (!isObject(entry)) return undefined;
    for (const field of ['issuer', 'clientId', 'profile', 'store'] as const) if (typeof entry[field] !== 'string') return undefined;
    if (entry.resource !== undefined && typeof entry.resource !== 'string') return undefined;
    if (entry.revision !== undefined && entry.revision !== '2025-03-26') return undefined;
    return entry as unknown as LoginEntry;
  }

  async saveLogin(resource: string, entry: LoginEntry | undefined): Promise<void> {
    await this.#update('logins.json', resource, entry);
  }
}

/** The token-store profile of a context server's login: one per resource (the issuer and client are the key's own). */
export function profileFor(resource: string): string {
  return `mcp-${createHash('sha256').update(resource).digest('hex').slice(0, 24)}`;
}
