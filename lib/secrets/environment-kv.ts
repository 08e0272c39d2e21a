/**
 * The kv engine that a `gantry auth` login may be kept in, from the environment: a SecretsClient made on first use
 * when an address (SECRETS_ADDR, or gantry:secretsAddr in a Pulumi program's configuration) and a token (SECRETS_TOKEN,
 * gantry:secretsToken) are set, none otherwise. The one resolver of that engine: the command, the library's token
 * stores and the Pulumi resources all ask it. `close` closes every client it made (their sockets would keep a command
 * or the Pulumi plugin's operation alive).
 */
import { SecretsClient } from './client.js';
import { resolveSecretsConfig } from './config.js';

export interface EnvironmentKv {
  /** The client, or undefined when the environment names no kv engine. A bad setting (an address that is no URL) throws. */
  open(): Promise<SecretsClient | undefined>;
  close(): void;
}

/**
 * Why the environment names no kv engine ("SECRETS_ADDR is not set", "SECRETS_TOKEN is not set"), or undefined when it
 * names one. Settings are read as the client reads them: the variable, else the Pulumi configuration.
 */
export function environmentKvMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const config = resolveSecretsConfig({}, { env });
  if (config.sources.address === 'default') return 'SECRETS_ADDR is not set';
  if (!config.token) return 'SECRETS_ADDR is set, SECRETS_TOKEN is not';
  return undefined;
}

export function environmentKv(env: NodeJS.ProcessEnv = process.env): EnvironmentKv {
  const made: SecretsClient[] = [];
  return {
    async open() {
      if (environmentKvMissing(env) !== undefined) return undefined;
      const client = new SecretsClient({ sources: { env } });
      made.push(client);
      return client;
    },
    close() {
      for (const client of made.splice(0)) client.close();
    },
  };
}
