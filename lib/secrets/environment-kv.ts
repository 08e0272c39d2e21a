/**
 * The kv engine that a `gantry auth` login may be kept in, from the environment: a SecretsClient made on first use
 * when SECRETS_ADDR and a token (SECRETS_TOKEN or VAULT_TOKEN) are set, none otherwise. `close` closes every client
 * it made (their sockets would keep a command or the Pulumi plugin's operation alive).
 */
import { SecretsClient } from './client.js';

export interface EnvironmentKv {
  /** The client, or undefined when the environment names no kv engine. */
  open(): Promise<SecretsClient | undefined>;
  close(): void;
}

export function environmentKv(env: NodeJS.ProcessEnv = process.env): EnvironmentKv {
  const made: SecretsClient[] = [];
  return {
    async open() {
      if (!env.SECRETS_ADDR || !(env.SECRETS_TOKEN || env.VAULT_TOKEN)) return undefined;
      const client = new SecretsClient({ sources: { env } });
      made.push(client);
      return client;
    },
    close() {
      for (const client of made.splice(0)) client.close();
    },
  };
}
