/**
 * What a device login keeps, and the places it can be kept (issue 14, item 6): the OS keyring, Gantry's kv engine, or
 * — only when asked — a plain-text file. Tokens never appear in a store's `location`, an error message or a log line.
 */
import type { StoreNames } from './wording.js';

/** The tokens of one login, as the authorization server granted them. */
export interface TokenSet {
  accessToken: string;
  /** Always `Bearer` (DEV-TOK-TOKEN-TYPE). */
  tokenType: 'Bearer';
  /** When the access token expires, ms since the epoch. */
  expiresAt: number;
  /** The scopes granted, space separated, case kept (DEV-TOK-SCOPE). */
  scope: string;
  /** Kept long-term and reused while valid (DEV-AUTH-REFRESH-REUSE). */
  refreshToken?: string;
  /** Time-based access: when the refresh token expires, ms since the epoch (DEV-TOK-REFRESH-EXPIRES-IN). */
  refreshTokenExpiresAt?: number;
  idToken?: string;
  /** When these tokens were obtained, ms since the epoch. */
  obtainedAt: number;
}

/** Which login: one per authorization server, client id and profile. */
export interface ProfileKey {
  /** The authorization server, normalised (`normaliseAuthUrl`): scheme, host, port, path without a trailing slash. */
  authUrl: string;
  clientId: string;
  /** `default` unless the user names another. */
  profile: string;
}

/** Who signed in (from the id token or userinfo); never secret, kept in the profile index too. */
export interface AccountInfo {
  issuer?: string;
  sub?: string;
  email?: string;
}

export interface StoredLogin extends ProfileKey {
  tokens: TokenSet;
  account?: AccountInfo;
}

export type StoreKind = 'keyring' | 'kv' | 'file';

export interface TokenStore {
  readonly kind: StoreKind;
  /** How to open this store again: `keyring`, `kv:<mount>/<path>` or `file` (what the profile index records). */
  readonly spec: string;
  /**
   * Where, in words a user understands: "OS keyring (Secret Service, service gantry)", "kv engine
   * secret/gantry/auth/default at http://…", "/home/u/.config/gantry/auth (plain-text files, mode 0600)".
   */
  readonly location: string;
  /** Where exactly this login is kept: the keyring account, the kv path and address, the file's path. */
  describe(key: ProfileKey): string;
  /** The login, or undefined when this store has none for the key. */
  read(key: ProfileKey): Promise<StoredLogin | undefined>;
  write(login: StoredLogin): Promise<void>;
  /** True when there was a login to delete. */
  delete(key: ProfileKey): Promise<boolean>;
}

/** The kv secret operations the kv store needs; `KvEngine` of lib/secrets has them. */
export interface KvEngineLike {
  read(name: string): Promise<{ state: 'current' | 'deleted' | 'destroyed' | 'missing'; data: Record<string, unknown> | null }>;
  write(name: string, data: Record<string, unknown>): Promise<unknown>;
  delete(name: string): Promise<void>;
  /** kv v1 or v2; with v2 the store keeps one version and deletes every version on logout. */
  version?(): Promise<1 | 2>;
  writeMetadata?(name: string, input: { maxVersions?: number }): Promise<void>;
  deleteMetadata?(name: string): Promise<void>;
}

/**
 * The kv engine a store keeps logins in: by default a secrets client configured from SECRETS_ADDR and SECRETS_TOKEN
 * (lib/secrets' `environmentKv`, for the library and the command alike); lib/secrets' `SecretsClient` fits as it is.
 */
export interface KvLike {
  readonly config: { readonly address: string; readonly namespace?: string | undefined };
  /** Splits `<mount>/<path>` at its mount. */
  kvAt(path: string): Promise<{ kv: KvEngineLike; name: string }>;
}

export interface OpenTokenStoreOptions {
  /** Allow a plain-text file when neither the keyring nor a kv engine can be used (`--insecure-storage`). */
  insecureStorage?: boolean;
  /** Default: GANTRY_CONFIG_DIR, else $XDG_CONFIG_HOME/gantry, else ~/.config/gantry. */
  configDir?: string;
  /** The profile, for the default kv path `secret/gantry/auth/<profile>`; else GANTRY_AUTH_PROFILE, else `default`. */
  profile?: string;
  /**
   * The kv client, or undefined when none is configured. Default: the one SECRETS_ADDR and SECRETS_TOKEN of `env`
   * configure (as the command reads them), else none.
   */
  kv?: () => Promise<KvLike | undefined>;
  /**
   * Where GANTRY_CONFIG_DIR, XDG_CONFIG_HOME, HOME and the SECRETS_* settings are read (default process.env). The keyring
   * binding reads process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** How messages name the choice of store: the options (default) or the command's flags (`storeFlagNames`). */
  names?: StoreNames;
  /** How long the keyring probe may take before the keyring counts as unreachable (default 3000 ms). */
  keyringProbeTimeoutMs?: number;
}

export interface OpenedTokenStore {
  store: TokenStore;
  /** Auto mode only: why the keyring was not used (printed so the user knows where the tokens went and why). */
  fallbackReason?: string;
  /** A warning to print: the tokens are kept in a plain-text file. */
  warning?: string;
}

/** One login in the profile index (`<configDir>/auth/profiles.json`). Never a token. */
export interface ProfileIndexEntry extends ProfileKey {
  store: {
    kind: StoreKind;
    /** What `openTokenStore` takes to open it again: `keyring`, `kv:secret/gantry/auth/default`, `file`. */
    spec: string;
    /** kv: the address of the service the login was written to. */
    address?: string;
  };
  /** Where, in words (the store's `describe(key)`). */
  location: string;
  account?: AccountInfo;
  /** When the login was last written there (ISO 8601). */
  writtenAt: string;
}

/** Names an account in a security event: issuer and subject, or an email address. */
export interface AccountRef {
  issuer?: string;
  sub?: string;
  email?: string;
}
