/**
 * `gantry modules …`: resolve, browse, pin and install registry modules. Tables on stdout, --json for machines,
 * progress on stderr (TTY only). Exit codes: 0 ok, 1 a check said no (hash mismatch, verify failed, no matching
 * version), 2 usage (bad address, manifest or lock file), 3 the registry or the download failed after retries.
 */
import type { Command } from 'commander';
import { dirname, join, resolve } from 'node:path';
import { CheckFailedError, GantryError } from '../../../errors.js';
import type { ModuleEvent, ModuleRecord, RegistryClient } from '../../../registry/index.js';
import type { Column, Output } from '../../output.js';
import { usage, type CliContext } from '../../context.js';
import type { CliErrorCode } from '../../error-codes.js';

/**
 * A path from a flag, absolute. An empty one is a usage error: `resolve('')` is the current folder, and `--dir ''`
 * must not install there, nor `--file ''` read it.
 */
function resolvePath(path: string, flag = '--file'): string {
  if (typeof path !== 'string' || path.trim() === '')
    throw usage(`${flag} is empty: give a path`, `${flag} names a ${flag === '--dir' ? 'folder' : 'file'}; leave the flag out for its default`);
  return resolve(path);
}

interface CommonFlags {
  concurrency?: string;
  discoveryTtl?: string;
}

const defaultDiscoveryTtlSeconds = 3600;

function wholeNumber(text: string | undefined, flag: string, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) throw usage(`${flag}: "${text}" is not a whole number${min ? ` of at least ${min}` : ''}`);
  return Number(text);
}

function envNumber(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : wholeNumber(value, name, 1);
}

async function openClient(flags: CommonFlags, context: CliContext): Promise<RegistryClient> {
  const { RegistryClient, createFileDiscoveryCache, defaultCacheDir } = await import('../../../registry/index.js');
  const ttlSeconds = wholeNumber(flags.discoveryTtl ?? process.env.GANTRY_DISCOVERY_TTL, '--discovery-ttl') ?? defaultDiscoveryTtlSeconds;
  return new RegistryClient({ logger: context.logger, discoveryCache: createFileDiscoveryCache(defaultCacheDir(), ttlSeconds * 1000) });
}

async function withClient<T>(flags: CommonFlags, context: CliContext, action: (client: RegistryClient) => Promise<T>): Promise<T> {
  const client = await openClient(flags, context);
  try {
    return await action(client);
  } finally {
    client.close();
  }
}

function limitsFromEnv() {
  const maxBytes = envNumber('GANTRY_MODULES_MAX_BYTES');
  const maxFiles = envNumber('GANTRY_MODULES_MAX_FILES');
  const maxDownloadBytes = envNumber('GANTRY_MODULES_MAX_DOWNLOAD_BYTES');
  return { ...(maxBytes ? { maxBytes } : {}), ...(maxFiles ? { maxFiles } : {}), ...(maxDownloadBytes ? { maxDownloadBytes } : {}) };
}

interface Paths {
  file: string;
  dir?: string;
}

/** The flags that repeat a command's own --file and --dir, so a hint can be pasted as it is. */
function pathFlags(paths: Paths, withDir: boolean): string {
  const file = paths.file !== 'gantry.modules.json' ? ` --file ${paths.file}` : '';
  const dir = withDir && paths.dir !== undefined && paths.dir !== '.gantry/modules' ? ` --dir ${paths.dir}` : '';
  return file + dir;
}

/**
 * The library's hints speak of its options; at a terminal each failure of pin and install gets the command that fixes
 * it instead (never one that only sends the user back here).
 */
function withCliHint(error: unknown, paths: Paths, name: string | undefined, moduleOf: (error: unknown) => string | undefined = () => undefined): unknown {
  if (error instanceof AggregateError) {
    // Several modules failed: each gets its own hint (the CLI prints every distinct one).
    for (const member of error.errors) withCliHint(member, paths, moduleOf(member));
    return error;
  }
  if (!(error instanceof GantryError)) return error;
  const pin = `gantry modules pin${pathFlags(paths, false)}`;
  const install = `gantry modules install${pathFlags(paths, true)}`;
  const hints: Record<string, string> = {
    NOT_PINNED: `run \`${pin}\` to add it to the lock file`,
    CONSTRAINT_CHANGED: `run \`${pin}\` to re-resolve it under the new constraint`,
    LOCK_MISMATCH: `restore gantry.lock.json from version control, or re-resolve the module with \`${pin} --upgrade ${name ?? '<name>'}\``,
    HASH_MISMATCH: `nothing was replaced. Review the change; to accept it, \`${pin} --upgrade ${name ?? '<name>'}\` pins the new content`,
    NOT_INSTALLED_BY_GANTRY: `move the folder away, or install elsewhere with --dir; \`${install} --force\` replaces it and deletes its content`,
    LOCAL_CHANGES: `copy your changes elsewhere if you want to keep them; \`${install} --force\` puts the pinned content back`,
  };
  const hint = hints[error.code];
  if (hint === undefined) return error;
  Object.defineProperty(error, 'hint', { value: hint, enumerable: true });
  return error;
}

/** What fixes each problem verify found. */
function verifyHint(bad: Array<{ name: string; problem?: string }>, paths: Paths): string {
  const names = (test: (problem: string) => boolean) => bad.filter((r) => test(r.problem ?? '')).map((r) => r.name);
  const actions: string[] = [];
  const unpinned = names((p) => p === 'not pinned' || p.startsWith('constraint changed'));
  const lied = names((p) => p.startsWith('lock '));
  const missing = names((p) => p === 'not installed' || p.startsWith('pinned '));
  const changed = names((p) => p === 'content differs from the lock');
  if (unpinned.length) actions.push(`\`gantry modules pin${pathFlags(paths, false)}\` pins ${unpinned.join(', ')}`);
  if (lied.length)
    actions.push(
      `restore gantry.lock.json from version control, or \`gantry modules pin${pathFlags(paths, false)} --upgrade ${lied.join(' ')}\` re-resolves ${lied.length === 1 ? 'it' : 'them'} (then \`gantry modules install${pathFlags(paths, true)}\` installs what it pinned)`,
    );
  if (missing.length) actions.push(`\`gantry modules install${pathFlags(paths, true)}\` installs ${missing.join(', ')}`);
  if (changed.length)
    actions.push(`\`gantry modules install${pathFlags(paths, true)} --force\` puts the pinned content of ${changed.join(', ')} back (local changes are lost)`);
  return actions.join('; ');
}

const recordColumns: Column<ModuleRecord>[] = [
  { header: 'module', value: (r) => `${r.namespace}/${r.name}/${r.provider}` },
  { header: 'version', value: (r) => r.version },
  { header: 'downloads', value: (r) => r.downloads, align: 'right' },
  { header: 'verified', value: (r) => (r.verified ? 'yes' : '') },
  { header: 'description', value: (r) => (r.description ?? '').slice(0, 60) },
];

/** What search and list found, every page of it: as JSON, or a table. */
async function printRecords(context: CliContext, json: boolean, items: AsyncIterable<ModuleRecord>): Promise<void> {
  const rows: ModuleRecord[] = [];
  for await (const item of items) rows.push(item);
  if (json) context.out.json(rows);
  else if (rows.length === 0) context.out.line('no modules found');
  else context.out.table(rows, recordColumns);
}

/** A progress bar counting finished modules, with the module being downloaded as detail. */
function moduleProgress(out: Output, label: string, total: number): { onEvent: (event: ModuleEvent) => void; done: (detail: string) => void } {
  const bar = out.progress(label, total);
  let finished = 0;
  return {
    onEvent(event) {
      if (event.phase === 'installed' || event.phase === 'skipped' || event.phase === 'pinned') {
        finished += 1;
        bar.update(finished, total, event.name);
      } else if (event.phase === 'download' && event.total) {
        bar.update(finished, total, `${event.name} ${Math.round((100 * (event.transferred ?? 0)) / event.total)}%`);
      }
    },
    done: (detail) => bar.done(detail),
  };
}

export function register(program: Command, context: CliContext): void {
  const modules = program
    .command('modules')
    .description('resolve, pin and install registry modules (service discovery, version constraints, content-hash lock)')
    .addHelpText(
      'after',
      `
Addresses: [<host>/]<namespace>/<name>/<provider>[//<subdir>]; without a host, GANTRY_REGISTRY_HOST (default registry.terraform.io).
Tokens: GANTRY_TOKEN_<host> or TF_TOKEN_<host> ("." as "_", "-" as "__"), then credentials "<host>" { token = … } blocks of
Terraform's CLI configuration (TF_CLI_CONFIG_FILE or ~/.terraformrc, ~/.terraform.d/*.tfrc.json); sent only to that registry.
Exit codes: 0 ok, 1 a check said no (hash mismatch, verify, no matching version), 2 usage, 3 registry or download failed.`,
    );

  const common = (command: Command) =>
    command.option('--discovery-ttl <seconds>', `how long a host's discovery result is cached on disk (0 = no cache; env GANTRY_DISCOVERY_TTL)`);
  // Only pin and install work on several modules at once; the other commands ask about one.
  const concurrent = (command: Command) => common(command).option('--concurrency <n>', 'modules resolved or installed at once', '16');

  common(modules.command('resolve'))
    .description('pick the newest version allowed by a constraint and show where its source is')
    .argument('<address>', 'module source address')
    .option('--version <constraint>', 'version constraint, e.g. "~> 1.2" (default: newest release)')
    .action(async (address: string, flags: CommonFlags & { version?: string }, command: Command) => {
      const { json } = context.globals(command);
      const { resolveAddress, formatModuleAddress } = await import('../../../registry/index.js');
      await withClient(flags, context, async (client) => {
        const resolution = await resolveAddress(client, address, flags.version);
        const row = {
          source: formatModuleAddress(resolution.address),
          constraint: flags.version ?? '',
          version: resolution.version,
          location: resolution.locationText,
          skipped: resolution.skipped,
        };
        if (json) context.out.json(row);
        else
          context.out.table(
            [row],
            [
              { header: 'source', value: (r) => r.source },
              { header: 'version', value: (r) => r.version },
              { header: 'location', value: (r) => r.location },
            ],
          );
      });
    });

  common(modules.command('versions'))
    .description('list the versions of a module, newest first')
    .argument('<address>', 'module source address')
    .action(async (address: string, flags: CommonFlags, command: Command) => {
      const { json } = context.globals(command);
      const { parseModuleAddress, parseVersion } = await import('../../../registry/index.js');
      const semver = (await import('semver')).default;
      await withClient(flags, context, async (client) => {
        const listed = await client.versions(parseModuleAddress(address));
        const sorted = [...listed].sort((a, b) => {
          const pa = parseVersion(a);
          const pb = parseVersion(b);
          if (!pa || !pb) return pa ? -1 : pb ? 1 : 0;
          return semver.rcompare(pa.semver, pb.semver);
        });
        const kind = (v: string) => (parseVersion(v)?.prerelease ? 'pre-release' : parseVersion(v) ? 'release' : 'unparseable');
        if (json) context.out.json(sorted.map((version) => ({ version, kind: kind(version) })));
        else
          context.out.table(sorted, [
            { header: 'version', value: (v) => v },
            { header: 'kind', value: kind },
          ]);
      });
    });

  common(modules.command('search'))
    .description("search modules (the query syntax is the registry's)")
    .argument('<query>', 'search text')
    .option('--provider <provider>', 'only this provider')
    .option('--namespace <namespace>', 'only this namespace')
    .option('--verified', 'only verified (partner) modules')
    .option('--host <host>', 'registry host (default GANTRY_REGISTRY_HOST or registry.terraform.io)')
    .option('--max <n>', 'stop after this many results', '100')
    .action(
      async (
        query: string,
        flags: CommonFlags & { provider?: string; namespace?: string; verified?: boolean; host?: string; max: string },
        command: Command,
      ) => {
        const { json } = context.globals(command);
        const max = wholeNumber(flags.max, '--max', 1);
        if (query.trim() === '') throw usage('the search query is empty');
        await withClient(flags, context, async (client) => {
          const records = client.search({ query, provider: flags.provider, namespace: flags.namespace, verified: flags.verified, host: flags.host, max });
          await printRecords(context, json, records);
        });
      },
    );

  common(modules.command('list'))
    .description("list modules, all or one namespace's")
    .argument('[namespace]', 'only this namespace')
    .option('--provider <provider>', 'only this provider')
    .option('--verified', 'only verified (partner) modules')
    .option('--host <host>', 'registry host (default GANTRY_REGISTRY_HOST or registry.terraform.io)')
    .option('--max <n>', 'stop after this many modules', '100')
    .action(
      async (namespace: string | undefined, flags: CommonFlags & { provider?: string; verified?: boolean; host?: string; max: string }, command: Command) => {
        const { json } = context.globals(command);
        const max = wholeNumber(flags.max, '--max', 1);
        await withClient(flags, context, async (client) => {
          await printRecords(context, json, client.listModules({ namespace, provider: flags.provider, verified: flags.verified, host: flags.host, max }));
        });
      },
    );

  common(modules.command('info'))
    .description("show a module's details: latest version, or <address>@<version>")
    .argument('<address>', 'module source address, optionally @<version>')
    .action(async (text: string, flags: CommonFlags, command: Command) => {
      const { json } = context.globals(command);
      const { parseModuleAddress } = await import('../../../registry/index.js');
      const at = text.lastIndexOf('@');
      const address = parseModuleAddress(at > 0 ? text.slice(0, at) : text);
      const version = at > 0 ? text.slice(at + 1) : undefined;
      if (version === '') throw usage(`"${text}" ends in "@" without a version`);
      await withClient(flags, context, async (client) => {
        const detail = version ? await client.version(address, version) : await client.latest(address);
        if (json) {
          context.out.json(detail);
          return;
        }
        const rows: Array<[string, string]> = [
          ['id', detail.id],
          ['description', detail.description ?? ''],
          ['owner', detail.owner ?? ''],
          ['source', detail.source ?? ''],
          ['published', detail.published_at ?? ''],
          ['downloads', String(detail.downloads ?? '')],
          ['verified', detail.verified ? 'yes' : 'no'],
          ['providers', (detail.providers ?? []).join(', ')],
          ['versions', (detail.versions ?? []).join(', ')],
          ['inputs', (detail.root?.inputs ?? []).map((i) => i.name).join(', ')],
          ['outputs', (detail.root?.outputs ?? []).map((o) => o.name).join(', ')],
          ['submodules', (detail.submodules ?? []).map((s) => s.path ?? '').join(', ')],
        ];
        context.out.table(rows, [
          { header: 'field', value: (r) => r[0] },
          { header: 'value', value: (r) => r[1] },
        ]);
      });
    });

  common(modules.command('downloads'))
    .description('show download counts (the v2 metrics summary)')
    .argument('<address>', 'module source address')
    .action(async (text: string, flags: CommonFlags, command: Command) => {
      const { json } = context.globals(command);
      const { parseModuleAddress } = await import('../../../registry/index.js');
      await withClient(flags, context, async (client) => {
        const summary = await client.downloadsSummary(parseModuleAddress(text));
        if (json) context.out.json(summary);
        else {
          const a = summary.data.attributes;
          context.out.table(
            [a],
            [
              { header: 'week', value: (r) => r.week, align: 'right' },
              { header: 'month', value: (r) => r.month, align: 'right' },
              { header: 'year', value: (r) => r.year, align: 'right' },
              { header: 'total', value: (r) => r.total, align: 'right' },
            ],
          );
        }
      });
    });

  concurrent(modules.command('pin'))
    .description('resolve the manifest into gantry.lock.json (versions, locations, content hashes)')
    .option('--file <manifest>', 'the manifest', 'gantry.modules.json')
    .option('--upgrade [names...]', 're-resolve every module, or the named ones, even if their constraint did not change')
    .option(
      '--dir <folder>',
      'where modules are installed: its record confirms kept pins without the network (others are checked against the registry)',
      '.gantry/modules',
    )
    .action(async (flags: CommonFlags & { file: string; dir: string; upgrade?: boolean | string[] }, command: Command) => {
      const { json } = context.globals(command);
      const registry = await import('../../../registry/index.js');
      const concurrency = wholeNumber(flags.concurrency, '--concurrency', 1);
      const file = resolvePath(flags.file);
      const lockPath = join(dirname(file), registry.lockFileName);
      const manifest = await registry.readManifest(file);
      const previous = await registry.readLockFile(lockPath);
      const { checkWritableFile } = await import('../../../local-paths.js');
      await checkWritableFile(lockPath, 'the lock file (next to --file)'); // before any request: a lock that cannot be written wastes them
      await withClient(flags, context, async (client) => {
        const progress = moduleProgress(context.out, 'pinning', manifest.length);
        const result = await registry
          .pin(manifest, previous, {
            client,
            concurrency,
            limits: limitsFromEnv(),
            logger: context.logger,
            onEvent: progress.onEvent,
            upgrade: flags.upgrade ?? false,
            dir: resolvePath(flags.dir, '--dir'),
          })
          .catch((error: unknown) => {
            throw withCliHint(error, { file: flags.file }, registry.moduleOfError(error), registry.moduleOfError);
          });
        progress.done('');
        const { readLocalText } = await import('../../../local-paths.js');
        const before = await readLocalText(lockPath, { what: 'the lock file', missingOk: true }).catch(() => undefined);
        const written = before !== registry.formatLockFile(result.lock);
        if (written) await registry.writeLockFile(lockPath, result.lock);
        if (json) context.out.json({ lockFile: lockPath, written, modules: result.modules });
        else {
          context.out.table(result.modules, [
            { header: 'name', value: (m) => m.name },
            { header: 'source', value: (m) => m.source },
            { header: 'constraint', value: (m) => m.constraint || 'any' },
            { header: 'version', value: (m) => m.version },
            { header: 'change', value: (m) => (!m.previous ? 'new' : m.previous !== m.version ? `from ${m.previous}` : m.changed ? 'content changed' : '') },
          ]);
          context.out.line(written ? `wrote ${lockPath}` : `unchanged ${lockPath}`);
        }
      });
    });

  concurrent(modules.command('install'))
    .description('install the pinned modules, refusing any whose content hash differs from the lock')
    .option('--file <manifest>', 'the manifest', 'gantry.modules.json')
    .option('--dir <folder>', 'where modules are installed', '.gantry/modules')
    .option('--force', 'replace module folders Gantry did not install or that were changed since (their content is lost)')
    .action(async (flags: CommonFlags & { file: string; dir: string; force?: boolean }, command: Command) => {
      const { json } = context.globals(command);
      const registry = await import('../../../registry/index.js');
      const concurrency = wholeNumber(flags.concurrency, '--concurrency', 1);
      const file = resolvePath(flags.file);
      const dir = resolvePath(flags.dir, '--dir');
      const manifest = await registry.readManifest(file);
      const lock = await registry.readLockFile(join(dirname(file), registry.lockFileName));
      const { ensureFolder } = await import('../../../local-paths.js');
      await ensureFolder(dir, 'the install folder (--dir)'); // before any request: /sys/kernel, /proc/nope, a file
      await withClient(flags, context, async (client) => {
        const progress = moduleProgress(context.out, 'installing', manifest.length);
        const results = await registry
          .install(manifest, lock, dir, {
            client,
            concurrency,
            limits: limitsFromEnv(),
            logger: context.logger,
            onEvent: progress.onEvent,
            force: flags.force ?? false,
          })
          .catch((error: unknown) => {
            throw withCliHint(error, { file: flags.file, dir: flags.dir }, registry.moduleOfError(error), registry.moduleOfError);
          });
        progress.done('');
        if (json) context.out.json(results);
        else
          context.out.table(results, [
            { header: 'name', value: (r) => r.name },
            { header: 'version', value: (r) => r.version },
            { header: 'status', value: (r) => r.status },
            { header: 'path', value: (r) => r.path },
          ]);
      });
    });

  modules
    .command('verify')
    .description('re-hash the installed modules against the lock; exit 1 on any difference')
    .option('--file <manifest>', 'the manifest', 'gantry.modules.json')
    .option('--dir <folder>', 'where modules are installed', '.gantry/modules')
    .action(async (flags: { file: string; dir: string }, command: Command) => {
      const { json } = context.globals(command);
      const registry = await import('../../../registry/index.js');
      const file = resolvePath(flags.file);
      const dir = resolvePath(flags.dir, '--dir');
      const manifest = await registry.readManifest(file);
      const lock = await registry.readLockFile(join(dirname(file), registry.lockFileName));
      const results = await registry.verify(manifest, lock, dir);
      if (json) context.out.json(results);
      else
        context.out.table(results, [
          { header: 'name', value: (r) => r.name },
          { header: 'status', value: (r) => (r.ok ? 'ok' : r.problem) },
          { header: 'hash', value: (r) => r.actual ?? '' },
        ]);
      const bad = results.filter((r) => !r.ok);
      if (bad.length > 0) {
        throw new CheckFailedError(
          `${bad.length} module${bad.length === 1 ? '' : 's'} failed verification: ${bad.map((r) => `${r.name} (${r.problem})`).join(', ')}`,
          {
            code: 'VERIFY_FAILED' satisfies CliErrorCode,
            hint: verifyHint(bad, { file: flags.file, dir: flags.dir }),
          },
        );
      }
    });
}
