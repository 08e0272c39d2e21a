// `gantry dev secrets`: the embedded kv secrets server alone, with its own port, root token, data file and TLS.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { DEV_SECRETS_PORT, startSecretsServer, type SecretsServerOptions } from '../devserver/secrets/index.js';
import { untilInterrupted } from './devservers.js';
import type { CliContext } from './program.js';

interface DevSecretsFlags {
  port: string;
  host: string;
  rootToken?: string;
  dataFile?: string;
  tlsCert?: string;
  tlsKey?: string;
  requireRequestHeader: boolean;
  namespace: string[];
}

export function registerDevSecrets(dev: Command, context: CliContext): void {
  dev
    .command('secrets')
    .description('serve the kv secrets API (secret/ as kv v2, kv/ as kv v1) and print the root token')
    .option('--port <port>', 'port to listen on (0 = any free port)', String(DEV_SECRETS_PORT))
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--root-token <token>', 'root token to accept (default: a random one, printed); GANTRY_DEV_SECRETS_ROOT_TOKEN also works')
    .option('--data-file <file>', 'keep secrets in this JSON file, written atomically (default: memory only)')
    .option('--tls-cert <file>', 'serve https with this PEM certificate (needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--require-request-header', 'refuse requests without "X-Secrets-Request: true", like a proxy with require_request_header', false)
    .option('--namespace <path>', 'create this namespace (repeatable)', (value: string, all: string[]) => [...all, value], [] as string[])
    .action(async (flags: DevSecretsFlags, command: Command) => {
      const { json } = context.globals(command);
      if (!/^\d+$/.test(flags.port) || Number(flags.port) > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got "${flags.port}"`);
      if (!flags.tlsCert !== !flags.tlsKey) throw new UsageError('--tls-cert and --tls-key go together');
      const options: SecretsServerOptions = {
        host: flags.host,
        port: Number(flags.port),
        requireRequestHeader: flags.requireRequestHeader,
        namespaces: flags.namespace,
        log: (line) => context.logger.debug(line),
      };
      const rootToken = flags.rootToken ?? process.env.GANTRY_DEV_SECRETS_ROOT_TOKEN;
      if (rootToken) options.rootToken = rootToken;
      if (flags.dataFile) options.dataFile = path.resolve(flags.dataFile);
      if (flags.tlsCert && flags.tlsKey) options.tls = { cert: await readFile(flags.tlsCert), key: await readFile(flags.tlsKey) };
      const server = await startSecretsServer(options);
      if (json) context.out.json({ name: server.name, url: server.url, token: server.rootToken, unsealKey: server.unsealKey });
      else {
        context.out.line(`kv secrets server on ${server.url} (secret/ kv v2, kv/ kv v1)${flags.dataFile ? `, data in ${options.dataFile}` : ', in memory'}`);
        context.out.line(`root token:  ${server.rootToken}`);
        context.out.line(`unseal key:  ${server.unsealKey}`);
        context.out.line(`export SECRETS_ADDR=${server.url} SECRETS_TOKEN=${server.rootToken}`);
        context.out.line('Press Ctrl-C to stop.');
      }
      await untilInterrupted(server.stop);
    });
}
