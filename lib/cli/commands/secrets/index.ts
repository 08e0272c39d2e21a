import { terminalText } from '../../../terminal-text.js';
import type { Command } from 'commander';
import { CheckFailedError, UsageError } from '../../../errors.js';
import type { KvEngine, KvReadResult, KvVersion, KvVersionMetadata, SecretsClient, TokenInfo } from '../../../secrets/index.js';
import { mask, type Output } from '../../output.js';
import type { CliContext } from '../../context.js';
import { parseDataArguments, parseVersions, parseWholeNumber, readSecretLine, readStdinText } from './input.js';

/** The flag that sets each client setting, so that a bad value is reported by the name typed. */
const flagNames = {
  address: '--address',
  namespace: '--namespace',
  caCert: '--ca-cert',
  caPath: '--ca-path',
  clientCert: '--client-cert',
  clientKey: '--client-key',
  tlsServerName: '--tls-server-name',
  skipVerify: '--skip-verify',
  maxRetries: '--max-retries',
  timeoutMs: '--timeout',
  tokenHeader: '--token-header',
  namespaceIn: '--namespace-in',
  maxRequestBytes: '--max-request-size',
  maxJsonDepth: '--max-json-depth',
  maxJsonStringValueLength: '--max-json-string-value-length',
  maxJsonObjectEntryCount: '--max-json-object-entry-count',
  maxJsonArrayElementCount: '--max-json-array-element-count',
} as const;

interface ConnectionFlags {
  address?: string;
  namespace?: string;
  caCert?: string;
  caPath?: string;
  clientCert?: string;
  clientKey?: string;
  tlsServerName?: string;
  skipVerify?: boolean;
  maxRetries?: string;
  timeout?: string;
  bearer?: boolean;
  tokenHeader?: string;
  namespaceIn?: string;
  maxRequestSize?: string;
  maxJsonDepth?: string;
  maxJsonStringValueLength?: string;
  maxJsonObjectEntryCount?: string;
  maxJsonArrayElementCount?: string;
  mount?: string;
  kvVersion?: string;
  json?: boolean;
}

async function openClient(command: Command): Promise<{ client: SecretsClient; flags: ConnectionFlags }> {
  const flags = command.optsWithGlobals() as ConnectionFlags;
  const { SecretsClient, parseDurationOption } = await import('./client-factory.js');
  const env = process.env;
  const { parseTokenHeader, parseNamespaceIn, parsePositiveInteger } = await import('../../../secrets/index.js');
  if (flags.bearer && flags.tokenHeader !== undefined && parseTokenHeader(flags.tokenHeader, '--token-header') !== 'authorization') {
    throw new UsageError('--bearer and --token-header x-secrets-token contradict each other', { hint: 'give one of them' });
  }
  const limits: Record<string, number> = {};
  for (const [flag, key, value] of [
    ['--max-request-size', 'maxRequestBytes', flags.maxRequestSize],
    ['--max-json-depth', 'maxJsonDepth', flags.maxJsonDepth],
    ['--max-json-string-value-length', 'maxJsonStringValueLength', flags.maxJsonStringValueLength],
    ['--max-json-object-entry-count', 'maxJsonObjectEntryCount', flags.maxJsonObjectEntryCount],
    ['--max-json-array-element-count', 'maxJsonArrayElementCount', flags.maxJsonArrayElementCount],
  ] as const) {
    if (value !== undefined) limits[key] = parsePositiveInteger(value, flag, key === 'maxRequestBytes' ? 'bytes' : undefined);
  }
  const client = new SecretsClient({
    ...(flags.address ? { address: flags.address } : {}),
    ...(flags.namespace ? { namespace: flags.namespace } : {}),
    ...(flags.caCert ? { caCert: flags.caCert } : {}),
    ...(flags.caPath ? { caPath: flags.caPath } : {}),
    ...(flags.clientCert ? { clientCert: flags.clientCert } : {}),
    ...(flags.clientKey ? { clientKey: flags.clientKey } : {}),
    ...(flags.tlsServerName ? { tlsServerName: flags.tlsServerName } : {}),
    ...(flags.skipVerify ? { skipVerify: true } : {}),
    ...(flags.maxRetries !== undefined ? { maxRetries: parseWholeNumber(flags.maxRetries, '--max-retries')! } : {}),
    ...(flags.timeout !== undefined ? { timeoutMs: parseDurationOption(flags.timeout, '--timeout') } : {}),
    ...(flags.tokenHeader !== undefined ? { tokenHeader: parseTokenHeader(flags.tokenHeader, '--token-header') } : {}),
    ...(flags.bearer ? { tokenHeader: 'authorization' as const } : {}),
    ...(flags.namespaceIn !== undefined ? { namespaceIn: parseNamespaceIn(flags.namespaceIn, '--namespace-in') } : {}),
    limits,
    sources: { env, optionNames: flagNames },
  });
  return { client, flags };
}

/** Run an action with a client, closing it afterwards (errors are shown with the command's hints by program.ts). */
async function withClient<T>(command: Command, action: (client: SecretsClient, flags: ConnectionFlags) => Promise<T>): Promise<T> {
  const { client, flags } = await openClient(command);
  try {
    return await action(client, flags);
  } finally {
    client.close();
  }
}

function kvVersionFlag(flags: ConnectionFlags): KvVersion | undefined {
  if (flags.kvVersion === undefined) return undefined;
  if (flags.kvVersion !== '1' && flags.kvVersion !== '2') throw new UsageError(`--kv-version must be 1 or 2, got "${flags.kvVersion}"`);
  return Number(flags.kvVersion) as KvVersion;
}

/** Run an action with a client at `<mount>/<path>`, closing it afterwards. */
async function withKv<T>(
  command: Command,
  path: string,
  action: (kv: KvEngine, name: string, client: SecretsClient, flags: ConnectionFlags) => Promise<T>,
): Promise<T> {
  return withClient(command, async (client, flags) => {
    const { kv, name } = await client.kvAt(path, { kvVersion: kvVersionFlag(flags), mount: flags.mount });
    return action(kv, name, client, flags);
  });
}

function requireName(name: string, path: string): string {
  if (name === '') throw new UsageError(`"${path}" names a mount, not a secret`, { hint: 'give <mount>/<path>, e.g. secret/app/db' });
  return name;
}

function versionRows(metadata: KvVersionMetadata | undefined): Array<[string, string]> {
  if (!metadata) return [];
  return [
    ['version', String(metadata.version)],
    ['created_time', metadata.createdTime || 'n/a'],
    ['deletion_time', metadata.deletionTime || 'n/a'],
    ['destroyed', String(metadata.destroyed)],
    ...(metadata.customMetadata ? Object.entries(metadata.customMetadata).map(([k, v]) => [`custom_metadata.${k}`, v] as [string, string]) : []),
  ];
}

function printPairs(out: Output, title: string | undefined, rows: Array<[string, string]>): void {
  if (rows.length === 0) return;
  if (title) out.line(`== ${title} ==`);
  out.table(rows, [
    { header: 'key', value: (r) => r[0] },
    { header: 'value', value: (r) => r[1] },
  ]);
}

function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function readOutcome(result: KvReadResult, path: string, version: number | undefined): void {
  if (result.state === 'current') return;
  const which = version !== undefined ? `version ${version} of ${path}` : path;
  if (result.state === 'missing') throw new CheckFailedError(`no secret at ${which}`, { code: 'SECRETS_MISSING' });
  if (result.state === 'deleted') {
    throw new CheckFailedError(
      `${which} was deleted at ${result.metadata.deletionTime}${version === undefined ? ` (version ${result.metadata.version})` : ''}`,
      {
        code: 'SECRETS_DELETED',
        hint: `bring it back with: gantry secrets undelete ${path} --versions ${result.metadata.version}`,
      },
    );
  }
  // Name the version once: `version 1 of p was destroyed`, or `p was destroyed (version 3)` when the latest was asked for.
  throw new CheckFailedError(`${which} was destroyed${version === undefined ? ` (version ${result.metadata.version})` : ''}; its data is gone`, {
    code: 'SECRETS_DESTROYED',
  });
}

function tokenRows(info: TokenInfo, token: string | undefined): Array<[string, string]> {
  return [
    ['token', token ? mask(token) : 'n/a'],
    ['token_accessor', info.accessor ?? 'n/a'],
    ['token_policies', info.policies.join(', ') || 'none'],
    ['token_duration', info.ttl === 0 ? 'never expires' : `${info.ttl}s`],
    ['token_renewable', String(info.renewable)],
  ];
}

export function register(program: Command, context: CliContext): void {
  const { out } = context;
  const secrets = program
    .command('secrets')
    .description('read and write secrets in the kv engine (v1 and v2) of the secrets service; the token comes from SECRETS_TOKEN or a login')
    .option('--address <url>', 'service address (SECRETS_ADDR, gantry:secretsAddr; default https://127.0.0.1:8200)')
    .option('--namespace <ns>', 'namespace (SECRETS_NAMESPACE)')
    .option('--ca-cert <file>', 'PEM CA bundle to trust (SECRETS_CACERT)')
    .option('--ca-path <dir>', 'folder of PEM CAs to trust (SECRETS_CAPATH)')
    .option('--client-cert <file>', 'client certificate for mutual TLS (SECRETS_CLIENT_CERT)')
    .option('--client-key <file>', 'client key for mutual TLS (SECRETS_CLIENT_KEY)')
    .option('--tls-server-name <name>', 'name to verify the server certificate against (SECRETS_TLS_SERVER_NAME)')
    .option('--skip-verify', 'do not verify the server certificate (SECRETS_SKIP_VERIFY); dangerous')
    .option('--max-retries <n>', 'retries on 412, 429, 5xx and connection errors (SECRETS_MAX_RETRIES; default 2)')
    .option('--timeout <duration>', 'request timeout, e.g. 30s (SECRETS_CLIENT_TIMEOUT; default 60s)')
    .option('--bearer', 'send the token as Authorization: Bearer instead of X-Secrets-Token (same as --token-header authorization)')
    .option('--token-header <header>', 'x-secrets-token or authorization (Bearer) (SECRETS_TOKEN_HEADER; default x-secrets-token)')
    .option('--namespace-in <where>', 'send the namespace in the header or in front of the path (SECRETS_NAMESPACE_IN; default header)')
    .option('--max-request-size <bytes>', 'refuse bodies over this size before sending (SECRETS_MAX_REQUEST_SIZE; default 33554432)')
    .option('--max-json-depth <n>', 'refuse JSON nested deeper before sending (SECRETS_MAX_JSON_DEPTH; default 500)')
    .option(
      '--max-json-string-value-length <n>',
      'refuse longer JSON strings, in bytes, before sending (SECRETS_MAX_JSON_STRING_VALUE_LENGTH; default 1048576)',
    )
    .option('--max-json-object-entry-count <n>', 'refuse JSON objects with more entries before sending (SECRETS_MAX_JSON_OBJECT_ENTRY_COUNT; default 10000)')
    .option('--max-json-array-element-count <n>', 'refuse JSON arrays with more elements before sending (SECRETS_MAX_JSON_ARRAY_ELEMENT_COUNT; default 10000)');
  secrets.addHelpText(
    'after',
    `
Paths are <mount>/<path>; the mount and its kv version are detected (as the Vault CLI does) unless --mount or
--kv-version is given. Secret values are masked in tables: ask for them with --field <key>, --reveal or --json.
Values for put/patch come from files or stdin so they stay out of shell history:
  gantry secrets put secret/app/db password=@password.txt
  printf %s "$PASSWORD" | gantry secrets put secret/app/db password=-
  gantry secrets put secret/app/db @data.json
Binary values are refused unless --base64 stores them base64-encoded:
  gantry secrets put --base64 secret/app/tls key=@key.der
  gantry secrets get secret/app/tls --field key | base64 -d > key.der
List the mounts with: gantry secrets mounts. Help for a command: gantry secrets help <command>.`,
  );

  const kvOptions = (command: Command) =>
    command
      .option('--mount <mount>', 'the mount, when it cannot be detected (skips detection with --kv-version)')
      .option('--kv-version <1|2>', 'the kv version of the mount (skips detection)');

  kvOptions(secrets.command('get <path>').description('read a secret (values masked unless --field, --reveal or --json)'))
    .option('--version <n>', 'read this version (kv v2)')
    .option('--field <key>', "print only this key's value, unmasked")
    .option('--reveal', 'show values in the table')
    .action(async (path: string, options: { version?: string; field?: string; reveal?: boolean }, command: Command) => {
      const { json } = context.globals(command);
      const version = parseWholeNumber(options.version, '--version', 1);
      await withKv(command, path, async (kv, name) => {
        const result = await kv.read(requireName(name, path), version !== undefined ? { version } : {});
        if (json && !options.field) {
          out.json({ path, mount: kv.mount, ...result });
          readOutcome(result, path, version);
          return;
        }
        readOutcome(result, path, version);
        const data = result.data ?? {};
        if (options.field !== undefined) {
          if (!(options.field in data))
            throw new CheckFailedError(`${path} has no key "${options.field}"`, {
              code: 'SECRETS_NO_FIELD',
              hint: `its keys are: ${terminalText(Object.keys(data).join(', ')) || 'none'}`,
            });
          // The raw value for a pipe: no newline added unless stdout is a terminal (as `vault kv get -field`).
          if (out.raw) out.raw(valueText(data[options.field]));
          else out.line(valueText(data[options.field]));
          return;
        }
        printPairs(out, result.metadata ? 'Secret Metadata' : undefined, versionRows(result.metadata));
        if (result.metadata) out.line('== Data ==');
        out.table(Object.entries(data), [
          { header: 'key', value: ([k]) => k },
          { header: 'value', value: ([, v]) => (options.reveal ? valueText(v) : mask(v)) },
        ]);
        for (const warning of result.warnings) out.note(`warning: ${terminalText(warning)}`);
      });
    });

  const writeCommand = (verb: 'put' | 'patch', description: string) =>
    kvOptions(secrets.command(`${verb} <path> [data...]`).description(description))
      .option('--cas <n>', 'check-and-set (kv v2): write only if the current version is n (0: only if absent)')
      .option('--base64', 'store the bytes of key=@file and key=- values base64-encoded (for binary values, which are refused otherwise)')
      .action(async (path: string, args: string[], options: { cas?: string; base64?: boolean }, command: Command) => {
        const { json } = context.globals(command);
        const cas = parseWholeNumber(options.cas, '--cas', 0);
        const data = await parseDataArguments(args, undefined, { base64: Boolean(options.base64) });
        await withKv(command, path, async (kv, name) => {
          const result =
            verb === 'put'
              ? await kv.write(requireName(name, path), data, cas !== undefined ? { cas } : {})
              : await kv.patch(requireName(name, path), data, cas !== undefined ? { cas } : {});
          if (json) {
            out.json({ path, mount: kv.mount, ...result });
            return;
          }
          if (result.metadata) printPairs(out, 'Secret Metadata', versionRows(result.metadata));
          else out.line(`Success! Data written to: ${path}`);
          for (const warning of result.warnings) out.note(`warning: ${terminalText(warning)}`);
        });
      });
  writeCommand('put', 'create or replace a secret: key=value, key=@file, key=- (stdin), @data.json or - (JSON on stdin)');
  writeCommand('patch', 'change some keys of a kv v2 secret (JSON merge patch: other keys stay)');

  kvOptions(secrets.command('list <path>').alias('ls').description('list the keys under a directory (folders end in /)')).action(
    async (path: string, _options: unknown, command: Command) => {
      const { json } = context.globals(command);
      await withKv(command, path.endsWith('/') ? path : `${path}/`, async (kv, name) => {
        const keys = await kv.list(name);
        if (json) out.json(keys);
        else if (keys.length === 0) out.note(`no keys under ${path}`);
        else for (const key of keys) out.line(terminalText(key));
      });
    },
  );

  kvOptions(secrets.command('rm <path>').alias('delete').description('delete a secret (kv v2: soft-delete the latest version, or --versions)'))
    .option('--versions <list>', 'versions to delete, e.g. 1,2 (kv v2)')
    .action(async (path: string, options: { versions?: string }, command: Command) => {
      const { json } = context.globals(command);
      const versions = parseVersions(options.versions);
      await withKv(command, path, async (kv, name) => {
        await kv.delete(requireName(name, path), versions ? { versions } : {});
        if (json) out.json({ path, deleted: versions ?? 'latest' });
        else out.line(`Success! Data deleted (if it existed) at: ${path}`);
      });
    });

  for (const [verb, description] of [
    ['undelete', 'undelete versions of a kv v2 secret'],
    ['destroy', 'permanently destroy versions of a kv v2 secret (metadata stays)'],
  ] as const) {
    kvOptions(secrets.command(`${verb} <path>`).description(description))
      .requiredOption('--versions <list>', 'versions, e.g. 1,2')
      .action(async (path: string, options: { versions: string }, command: Command) => {
        const { json } = context.globals(command);
        const versions = parseVersions(options.versions)!;
        await withKv(command, path, async (kv, name) => {
          if (verb === 'undelete') await kv.undelete(requireName(name, path), versions);
          else await kv.destroy(requireName(name, path), versions);
          if (json) out.json({ path, [verb === 'undelete' ? 'undeleted' : 'destroyed']: versions });
          else
            out.line(
              `Success! ${verb === 'undelete' ? 'Undeleted' : 'Destroyed'} ${versions.length === 1 ? 'version' : 'versions'} ${versions.join(', ')} of ${path}`,
            );
        });
      });
  }

  const meta = secrets.command('meta').description('kv v2 metadata: versions, max versions, check-and-set, custom metadata');
  kvOptions(meta.command('get <path>').description('show the metadata and every version of a key')).action(
    async (path: string, _options: unknown, command: Command) => {
      const { json } = context.globals(command);
      await withKv(command, path, async (kv, name) => {
        const metadata = await kv.readMetadata(requireName(name, path));
        if (!metadata) throw new CheckFailedError(`no metadata at ${path}`, { code: 'SECRETS_MISSING' });
        if (json) {
          out.json({ path, mount: kv.mount, ...metadata });
          return;
        }
        printPairs(out, 'Metadata', [
          ['cas_required', String(metadata.casRequired)],
          ['created_time', metadata.createdTime],
          ['current_version', String(metadata.currentVersion)],
          ['delete_version_after', metadata.deleteVersionAfter],
          ['max_versions', String(metadata.maxVersions)],
          ['oldest_version', String(metadata.oldestVersion)],
          ['updated_time', metadata.updatedTime],
          ...Object.entries(metadata.customMetadata ?? {}).map(([k, v]) => [`custom_metadata.${k}`, v] as [string, string]),
        ]);
        out.line('== Versions ==');
        out.table(
          Object.entries(metadata.versions).sort(([a], [b]) => Number(a) - Number(b)),
          [
            { header: 'version', value: ([v]) => v, align: 'right' },
            { header: 'created_time', value: ([, v]) => v.createdTime },
            { header: 'deletion_time', value: ([, v]) => v.deletionTime || 'n/a' },
            { header: 'destroyed', value: ([, v]) => String(v.destroyed) },
          ],
        );
      });
    },
  );
  kvOptions(meta.command('put <path>').description('set max versions, check-and-set or custom metadata of a key'))
    .option('--max-versions <n>', 'versions to keep (0: the mount default, 10)')
    .option('--cas-required <bool>', 'require check-and-set on writes (true or false)')
    .option('--delete-version-after <duration>', 'delete versions this long after writing, e.g. 768h (0s: never)')
    .option('--custom <key=value...>', 'custom metadata (replaces all of it)')
    .action(async (path: string, options: { maxVersions?: string; casRequired?: string; deleteVersionAfter?: string; custom?: string[] }, command: Command) => {
      const { json } = context.globals(command);
      const input: Parameters<KvEngine['writeMetadata']>[1] = await versionSettings(options);
      if (options.custom) {
        input.customMetadata = {};
        for (const pair of options.custom) {
          const eq = pair.indexOf('=');
          if (eq <= 0) throw new UsageError(`--custom takes key=value, got "${pair}"`);
          input.customMetadata[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
      }
      if (Object.keys(input).length === 0) throw new UsageError('nothing to change: give --max-versions, --cas-required, --delete-version-after or --custom');
      await withKv(command, path, async (kv, name) => {
        await kv.writeMetadata(requireName(name, path), input);
        if (json) out.json({ path, ...input });
        else out.line(`Success! Metadata written to: ${path}`);
      });
    });
  kvOptions(meta.command('rm <path>').alias('delete').description('delete a key with all its versions and metadata (irreversible)')).action(
    async (path: string, _options: unknown, command: Command) => {
      const { json } = context.globals(command);
      await withKv(command, path, async (kv, name) => {
        await kv.deleteMetadata(requireName(name, path));
        if (json) out.json({ path, deleted: 'all versions and metadata' });
        else out.line(`Success! Deleted every version and the metadata of: ${path}`);
      });
    },
  );

  const config = secrets.command('config').description('the kv v2 settings of a mount');
  kvOptions(config.command('get <mount>').description('show max versions, check-and-set and delete-version-after of a kv v2 mount')).action(
    async (mount: string, _options: unknown, command: Command) => {
      const { json } = context.globals(command);
      await withKv(command, mount, async (kv) => {
        const settings = await kv.readConfig();
        if (json) out.json({ mount: kv.mount, ...settings });
        else
          printPairs(out, undefined, [
            ['max_versions', String(settings.maxVersions)],
            ['cas_required', String(settings.casRequired)],
            ['delete_version_after', settings.deleteVersionAfter],
          ]);
      });
    },
  );
  kvOptions(config.command('put <mount>').description('change the kv v2 settings of a mount'))
    .option('--max-versions <n>', 'versions kept per key (0 means 10)')
    .option('--cas-required <bool>', 'require check-and-set on every write (true or false)')
    .option('--delete-version-after <duration>', 'delete versions this long after writing (0s: never)')
    .action(async (mount: string, options: { maxVersions?: string; casRequired?: string; deleteVersionAfter?: string }, command: Command) => {
      const { json } = context.globals(command);
      const input = await versionSettings(options);
      if (Object.keys(input).length === 0) throw new UsageError('nothing to change: give --max-versions, --cas-required or --delete-version-after');
      await withKv(command, mount, async (kv) => {
        await kv.writeConfig(input);
        if (json) out.json({ mount: kv.mount, ...input });
        else out.line(`Success! Configuration of ${kv.mount} written`);
      });
    });

  secrets
    .command('mounts')
    .description('list the mounts the token may see, with their kv version (as `vault secrets list`)')
    .action(async (_options: unknown, command: Command) => {
      const { json } = context.globals(command);
      await withClient(command, async (client) => {
        const mounts = await client.mounts();
        if (json) out.json(mounts);
        else if (mounts.length === 0) out.note('no mounts the token may see');
        else {
          out.table(mounts, [
            { header: 'path', value: (m) => m.path },
            { header: 'type', value: (m) => m.type },
            { header: 'version', value: (m) => (m.kvVersion === undefined ? 'n/a' : `kv v${m.kvVersion}`) },
            { header: 'description', value: (m) => m.description || 'n/a' },
          ]);
        }
      });
    });

  // `help <command>` shows that command's help, as commander's own help command does (`help put`, `help meta put`);
  // anything else is a path, and the service's help for it is shown (`help secret/`).
  secrets
    .command('help [target...]')
    .description("help for a command (help put, help meta put), or the service's help for a path (help secret/; needs permission on it)")
    .action(async (target: string[], _options: unknown, command: Command) => {
      let node: Command = secrets;
      let depth = 0;
      for (const word of target) {
        const sub = node.commands.find((c) => c.name() === word || c.aliases().includes(word));
        if (!sub) break;
        node = sub;
        depth++;
      }
      if (target.length === 0 || depth === target.length) {
        node.outputHelp();
        return;
      }
      if (depth > 0 || target.length > 1) {
        const known = node.commands.map((c) => c.name()).filter((n) => n !== 'help');
        const named = target.slice(0, depth).join(' ');
        throw new UsageError(`"${target.join(' ')}" is neither a command nor one path`, {
          hint:
            depth === 0
              ? 'give one path, e.g. gantry secrets help secret/, or a command: gantry secrets help put'
              : known.length > 0
                ? `the commands of ${named} are: ${known.join(', ')}`
                : `${named} has no sub-commands: gantry secrets help ${named}`,
        });
      }
      const path = target[0]!;
      const { json } = context.globals(command);
      await withClient(command, async (client) => {
        const help = await client.help(path);
        if (json) out.json(help);
        else {
          out.line(help.help.trimEnd());
          out.line();
          out.line(`Paths (relative to ${path}): ${terminalText(Object.keys(help.openapi.paths).join(', ')) || 'none'}`);
        }
      });
    });

  const login = secrets
    .command('login')
    .description('log in and print what the token may do; the token is printed only with --token-only')
    .option('--token-only', 'print only the token, e.g. for `export SECRETS_TOKEN=$(...)`');
  const finishLogin = (command: Command, client: SecretsClient, info: TokenInfo) => {
    const flags = command.optsWithGlobals() as { tokenOnly?: boolean; json?: boolean };
    // The raw token for `$(…)`: no newline added unless stdout is a terminal (as `vault login -token-only`).
    if (flags.tokenOnly) {
      if (out.raw) out.raw(client.revealToken() ?? '');
      else out.line(client.revealToken() ?? '');
    } else if (flags.json)
      out.json({
        accessor: info.accessor,
        policies: info.policies,
        ttl: info.ttl,
        renewable: info.renewable,
        entityId: info.entityId,
        metadata: info.metadata,
      });
    else {
      out.line('Success! You are logged in. The token is held by this command only; print it with --token-only.');
      printPairs(out, undefined, tokenRows(info, client.revealToken()));
    }
  };
  login
    .command('token')
    .description('check a token (from SECRETS_TOKEN, or stdin) with lookup-self')
    .option('--renew', 'also renew it (renew-self)')
    .action(async (options: { renew?: boolean }, command: Command) => {
      await withClient(command, async (client) => {
        const token = client.revealToken() ?? (await readSecretLine('Token (will be hidden): ')).trim();
        if (!token) throw new UsageError('no token: set SECRETS_TOKEN or pipe it on stdin');
        let info = await client.loginWithToken(token);
        if (options.renew) info = await client.renewSelf();
        finishLogin(command, client, info);
      });
    });
  login
    .command('userpass')
    .description('log in with a username; the password is read from stdin (hidden at a terminal)')
    .requiredOption('--username <name>', 'the username')
    .option('--path <mount>', 'where the userpass method is mounted', 'userpass')
    .action(async (options: { username: string; path: string }, command: Command) => {
      await withClient(command, async (client) => {
        const password = await readSecretLine('Password (will be hidden): ');
        if (!password) throw new UsageError('no password given on stdin');
        finishLogin(command, client, await client.loginUserpass(options.username, password, { mount: options.path }));
      });
    });
  login
    .command('approle')
    .description('log in with an AppRole; the secret_id is read from stdin (or SECRETS_SECRET_ID)')
    .requiredOption('--role-id <id>', 'the role_id (not secret)')
    .option('--no-secret-id', 'the role needs no secret_id (bind_secret_id=false)')
    .option('--path <mount>', 'where the approle method is mounted', 'approle')
    .action(async (options: { roleId: string; secretId: boolean; path: string }, command: Command) => {
      await withClient(command, async (client) => {
        let secretId: string | undefined;
        if (options.secretId) {
          secretId = process.env.SECRETS_SECRET_ID || (await readStdinText()).trim();
          if (!secretId) throw new UsageError('no secret_id: pipe it on stdin or set SECRETS_SECRET_ID (or pass --no-secret-id)');
        }
        finishLogin(command, client, await client.loginAppRole(options.roleId, secretId, { mount: options.path }));
      });
    });
}

interface VersionSettingFlags {
  maxVersions?: string;
  casRequired?: string;
  deleteVersionAfter?: string;
}

/** The version-keeping settings `meta put` and `config put` share, checked before anything is sent. */
async function versionSettings(options: VersionSettingFlags): Promise<{ maxVersions?: number; casRequired?: boolean; deleteVersionAfter?: string }> {
  const settings: { maxVersions?: number; casRequired?: boolean; deleteVersionAfter?: string } = {};
  const max = parseWholeNumber(options.maxVersions, '--max-versions');
  if (max !== undefined) settings.maxVersions = max;
  if (options.casRequired !== undefined) {
    if (!['true', 'false'].includes(options.casRequired))
      throw new UsageError('--cas-required must be true or false', { hint: 'write --cas-required true or --cas-required false' });
    settings.casRequired = options.casRequired === 'true';
  }
  if (options.deleteVersionAfter !== undefined) {
    // Loaded here, like the secrets client, so that `gantry --help` loads nothing of the secrets area.
    const { checkVaultDuration } = await import('../../../secrets/index.js');
    settings.deleteVersionAfter = checkVaultDuration(options.deleteVersionAfter, '--delete-version-after');
  }
  return settings;
}
