// What `gantry dev` knows of each embedded server: how to start it in a run's context, and what it prints once started.

export interface DevServer {
  name: string;
  url: string;
  /** What a client needs to talk to it (tokens, users), printed by `gantry dev`. */
  credentials: Record<string, string>;
  /** Environment a client of it reads (`SECRETS_ADDR`, …), printed by `gantry dev` as `export` lines to paste. */
  env?: Record<string, string>;
  stop(): Promise<void>;
}

export interface DevContext {
  host: string;
  /** The package's examples/ folder (example modules, demo site). */
  examplesDir: string;
  /** A scratch folder this run may write to; removed when the run ends unless kept. */
  stateDir: string;
  /** The servers of this run started so far, in the order of `devServers` (the storage API asks the authorization server about tokens). */
  started?: readonly DevServer[];
  /** The authorization server's dialect (`gantry dev --oauth-dialect`), checked already; else GANTRY_DEV_OAUTH_DIALECT, else google. */
  oauthDialect?: 'google' | 'rfc8628';
}

export interface DevServerStarter {
  name: string;
  description: string;
  start(context: DevContext): Promise<DevServer>;
}
