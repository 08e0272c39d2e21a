// `gantry dev secrets`: the embedded kv secrets server alone, with its own port, root token, data file, mounts,
// request limits and TLS.
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import { DEV_SECRETS_PORT, devServerModules, type JsonLimits, type SecretsServerOptions } from '../../../../devserver/index.js';
import { checkPortFlag, devHostOf, listenAsAsked, serveAlone } from '../../serving.js';
import type { CliContext } from '../../context.js';

interface DevSecretsFlags {
  port: string;
  host?: string;
  rootToken?: string;
  dataFile?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  requireRequestHeader: boolean;
  namespace: string[];
  mount: string[];
  maxRequestSize?: string;
  maxJsonDepth?: string;
  maxJsonStringValueLength?: string;
  maxJsonObjectEntryCount?: string;
  maxJsonArrayElementCount?: string;
}

type MountSpec = { path: string; version: 1 | 2 };

const collect = (value: string, all: string[]) => [...all, value];

/** `--mount <path>=kv1|kv2`: the path as the server keys it (`apps/`), checked as the server would refuse it. */
export function parseMountFlag(value: string): MountSpec {
  const eq = value.lastIndexOf('=');
  const usage = 'write --mount <path>=kv1 or --mount <path>=kv2, e.g. --mount apps/=kv2';
  if (eq < 0) throw new UsageError(`--mount takes <path>=kv1|kv2, got "${value}"`, { hint: usage });
  const engine = value
    .slice(eq + 1)
    .trim()
    .toLowerCase();
  if (engine !== 'kv1' && engine !== 'kv2')
    throw new UsageError(`--mount ${value}: the engine must be kv1 or kv2, got "${value.slice(eq + 1)}"`, { hint: usage });
  const trimmed = value
    .slice(0, eq)
    .trim()
    .replace(/^\/+|\/+$/g, '');
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((s) => s === '' || s.endsWith('.') || /[\s\p{Cc}]/u.test(s))) {
    throw new UsageError(`--mount ${value}: "${value.slice(0, eq)}" is not a mount path`, {
      hint: 'a mount path is /-separated names with no empty segment, no whitespace, none ending in a period',
    });
  }
  if (segments[0] === 'sys' || segments[0] === 'auth') throw new UsageError(`--mount ${value}: sys/ and auth/ are reserved for the service's own endpoints`);
  return { path: `${trimmed}/`, version: engine === 'kv1' ? 1 : 2 };
}

/** The mounts asked for, each once and none inside another; undefined (the server's default) when none are. */
export function parseMountFlags(values: string[]): MountSpec[] | undefined {
  if (values.length === 0) return undefined;
  const mounts = values.map(parseMountFlag);
  for (const a of mounts) {
    const clash = mounts.find((b) => b !== a && b.path.startsWith(a.path));
    if (clash)
      throw new UsageError(
        clash.path === a.path ? `--mount ${a.path} is given twice` : `--mount ${clash.path} is inside --mount ${a.path}: mounts cannot be nested`,
      );
  }
  return mounts;
}

function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number of at least 1, got "${value}"`);
  return n;
}

/** `kv/ kv v1, secret/ kv v2`: the mounts as server.mounts() lists them (sorted by path) */
export function describeMounts(mounts: MountSpec[]): string {
  return mounts.map((m) => `${m.path} kv v${m.version}`).join(', ') || 'no kv mounts';
}

export function registerDevSecrets(dev: Command, context: CliContext): void {
  dev
    .command('secrets')
    .description('serve the kv secrets API (by default secret/ as kv v2, kv/ as kv v1) and print the root token')
    .option('--port <port>', 'port to listen on (0 = any free port)', String(DEV_SECRETS_PORT))
    .option('--host <address>', 'the loopback address to listen on (127.0.0.1, ::1, localhost; default 127.0.0.1)')
    .option('--root-token <token>', 'root token to accept (default: a random one, printed); GANTRY_DEV_SECRETS_ROOT_TOKEN also works')
    .option('--data-file <file>', 'keep secrets in this JSON file, written atomically (default: memory only)')
    .option('--tls-cert <file>', 'serve https with this PEM certificate (needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--tls-client-ca <file>', 'mutual TLS: require a client certificate signed by a CA in this PEM file (needs --tls-cert)')
    .option('--require-request-header', 'refuse requests without "X-Secrets-Request: true", like a proxy with require_request_header', false)
    .option('--namespace <path>', 'create this namespace (repeatable)', collect, [] as string[])
    .option(
      '--mount <path=kv1|kv2>',
      'a kv mount in every namespace, e.g. apps/=kv2 (repeatable; replaces the default secret/=kv2 kv/=kv1)',
      collect,
      [] as string[],
    )
    .option('--max-request-size <bytes>', 'answer 413 to larger request bodies (default 33554432, 32 MiB)')
    .option('--max-json-depth <n>', 'answer 400 to JSON nested deeper (default 500)')
    .option('--max-json-string-value-length <n>', 'answer 400 to longer JSON strings, in bytes (default 1048576)')
    .option('--max-json-object-entry-count <n>', 'answer 400 to JSON objects with more entries (default 10000)')
    .option('--max-json-array-element-count <n>', 'answer 400 to JSON arrays with more elements (default 10000)')
    .action(async (flags: DevSecretsFlags, command: Command) => {
      const { startSecretsServer } = await devServerModules.secrets();
      const { json } = context.globals(command);
      const host = devHostOf(command);
      checkPortFlag(flags.port);
      if (!flags.tlsCert !== !flags.tlsKey) throw new UsageError('--tls-cert and --tls-key go together');
      if (flags.tlsClientCa && !flags.tlsCert)
        throw new UsageError('--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for over https only');
      const options: SecretsServerOptions = {
        host,
        port: Number(flags.port),
        requireRequestHeader: flags.requireRequestHeader,
        namespaces: flags.namespace,
        log: (line) => context.logger.debug(line),
      };
      const mounts = parseMountFlags(flags.mount);
      if (mounts) options.mounts = mounts;
      const maxRequestSize = positive(flags.maxRequestSize, '--max-request-size');
      if (maxRequestSize !== undefined) options.maxRequestSize = maxRequestSize;
      const jsonLimits: Partial<JsonLimits> = {};
      for (const [key, flag, value] of [
        ['maxDepth', '--max-json-depth', flags.maxJsonDepth],
        ['maxStringValueLength', '--max-json-string-value-length', flags.maxJsonStringValueLength],
        ['maxObjectEntryCount', '--max-json-object-entry-count', flags.maxJsonObjectEntryCount],
        ['maxArrayElementCount', '--max-json-array-element-count', flags.maxJsonArrayElementCount],
      ] as const) {
        const n = positive(value, flag);
        if (n !== undefined) jsonLimits[key] = n;
      }
      options.jsonLimits = jsonLimits;
      const rootToken = flags.rootToken ?? process.env.GANTRY_DEV_SECRETS_ROOT_TOKEN;
      if (rootToken) options.rootToken = rootToken;
      if (flags.dataFile !== undefined) {
        if (flags.dataFile.trim() === '') throw new UsageError('--data-file is empty: give the path of a JSON file (it is created when missing)');
        options.dataFile = path.resolve(flags.dataFile);
        options.dataFileWhat = 'the data file (--data-file)';
      }
      if (flags.tlsCert && flags.tlsKey) {
        // Regular PEM files of a few MB: a device, a FIFO or a folder is exit 2 naming the flag, never read without end.
        const { readLocalFile } = await import('../../../local-paths.js');
        const pem = (file: string, flag: string) => readLocalFile(file, { what: `the ${flag} file`, hint: `${flag} names a PEM file` });
        options.tls = { cert: await pem(flags.tlsCert, '--tls-cert'), key: await pem(flags.tlsKey, '--tls-key') };
        if (flags.tlsClientCa) options.tls.ca = await pem(flags.tlsClientCa, '--tls-client-ca');
      }
      const server = await listenAsAsked({ host, port: options.port ?? 0, portFlag: '--port' }, () => startSecretsServer(options));
      await serveAlone(context.out, json, server, {
        json: () => ({
          token: server.rootToken,
          unsealKey: server.unsealKey,
          mounts: server.mounts(),
          clientCertificateRequired: Boolean(flags.tlsClientCa),
        }),
        text() {
          context.out.line(
            `kv secrets server on ${server.url} (${describeMounts(server.mounts())})${flags.dataFile ? `, data in ${options.dataFile}` : ', in memory'}`,
          );
          context.out.line(`root token:  ${server.rootToken}`);
          context.out.line(`unseal key:  ${server.unsealKey}`);
          context.out.line(`export SECRETS_ADDR=${server.url} SECRETS_TOKEN=${server.rootToken}`);
          if (flags.tlsCert) context.out.line(`TLS: clients must trust the CA that signed ${flags.tlsCert} (SECRETS_CACERT or SECRETS_CAPATH)`);
          if (flags.tlsClientCa)
            context.out.line(
              `mutual TLS: clients must present a certificate signed by a CA in ${flags.tlsClientCa} (SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY)`,
            );
        },
      });
    });
}
