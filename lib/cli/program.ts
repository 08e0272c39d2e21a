import { Command, CommanderError } from 'commander';
import { ExitCode, GantryError, cliHintOf, exitCodeForSystemError, shown } from '../errors.js';
import { redact } from '../redact.js';
import { terminalText } from '../terminal-text.js';
import { createLogger, setLogger, type Logger } from '../log.js';
import { parseDuration } from '../arguments.js';
import { describeWait, longWaitMs, onWait, setWaitLimits, waitLimits, type WaitLimits } from '../waits.js';
import { version } from '../version.js';
import type { CliContext, CommandGroup, GlobalOptions } from './context.js';
import { groupsFor } from './groups.js';
import { createOutput, type Output, type OutputStreams } from './output.js';

/**
 * The program with `groups` registered (`groupsFor` in groups.ts: every group, or the one a command line names).
 * `versionFlag: false` leaves `--version` to the verbs (`secrets get --version 3`): commander reads a program option
 * anywhere on the line, so the program's `-V, --version` is only registered when it can apply (first argument, help).
 */
export function buildProgram(context: CliContext, options: { groups: readonly CommandGroup[]; versionFlag?: boolean }): Command {
  const program = new Command('gantry').description(
    'Pinned registry modules, kv secrets, page-analysis deployment gates, the platform API and its webhooks, device login and the storage API, for scripts, pipelines and Pulumi.',
  );
  if (options.versionFlag !== false) program.version(version, '-V, --version', 'print the version');
  program
    .option('--json', 'print machine-readable JSON on stdout', false)
    .option('-v, --verbose', 'log details and full errors on stderr', false)
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.configureOutput({
    writeOut: (text) => context.out.line(text.replace(/\n$/, '')),
    writeErr: (text) => process.stderr.write(terminalText(text, { lineBreaks: 'keep' })),
  });
  for (const group of options.groups) group.register(program, context);
  for (const command of program.commands) command.exitOverride();
  offerHelpCommands(program);
  offerWaitBounds(program);
  return program;
}

/** The groups whose commands talk to services over the network, and so wait for them. */
const waitingGroups = new Set(['modules', 'secrets', 'gate', 'browser', 'platform', 'hooks', 'auth', 'storage', 'mcp', 'doctor']);

/**
 * `--timeout` and `--max-wait` on every command of a group that makes network calls, beside its own flags (a command
 * whose `--timeout` already bounds its own wait — doctor's probes, the browser's page load, mcp's sign-in, secrets'
 * requests — keeps it). Their values are parsed before the action runs: a bad one is exit 2 before anything is sent.
 */
function offerWaitBounds(program: Command): void {
  const leaves = (command: Command): Command[] =>
    command.commands.length === 0 ? [command] : command.commands.filter((c) => c.name() !== 'help').flatMap(leaves);
  const generic = new WeakSet<Command>();
  for (const group of program.commands.filter((c) => waitingGroups.has(c.name()))) {
    for (const command of leaves(group)) {
      const has = (flag: string) => command.options.some((option) => option.long === flag);
      if (!has('--timeout')) generic.add(command);
      if (generic.has(command))
        command.option(
          '--timeout <duration>',
          "the longest wait for an answer from a server, per attempt, e.g. 30s (GANTRY_TIMEOUT; default 60s, or the service's own)",
        );
      if (!has('--max-wait'))
        command.option(
          '--max-wait <duration>',
          'the longest wait for a rate limit to reset, e.g. 5m; 0 fails at once (GANTRY_MAX_WAIT; default 61m for the platform)',
        );
    }
  }
  program.hook('preAction', (_program, action) => {
    if (!waitingGroups.has(groupOf(action))) return;
    const flags = action.opts() as { timeout?: unknown; maxWait?: unknown };
    const limits: WaitLimits = {};
    if (generic.has(action) && typeof flags.timeout === 'string') limits.timeoutMs = parseDuration(flags.timeout, '--timeout');
    if (typeof flags.maxWait === 'string') limits.maxWaitMs = parseDuration(flags.maxWait, '--max-wait', { allowZero: true });
    setWaitLimits(limits);
    waitLimits(); // GANTRY_TIMEOUT and GANTRY_MAX_WAIT checked now: a bad value is exit 2 before anything is sent
  });
}

function groupOf(command: Command): string {
  let current = command;
  while (current.parent?.parent) current = current.parent;
  return current.name();
}

/**
 * The waits the clients announce (lib/waits.ts), said on stderr: every answer that keeps a command waiting and
 * every rate-limit hold, and a retry when its wait is long or the first of its host (the rest with --verbose).
 */
function sayWaits(out: Output, logger: Logger): () => void {
  // When each host was last said to be waited for: a retry is said when, with its delay, that would be 5 s ago or more,
  // so short attempts (--timeout 3s) and short delays never add up to a silence of more than a few seconds.
  const lastSaid = new Map<string, number>();
  return onWait((notice) => {
    const text = describeWait(notice, '--max-wait');
    const who = 'host' in notice ? notice.host : notice.what;
    const said = lastSaid.get(who);
    if (notice.kind === 'retry' && said !== undefined && Date.now() + notice.delayMs - said < longWaitMs) {
      logger.debug(text);
      return;
    }
    lastSaid.set(who, Date.now());
    out.note(text);
  });
}

/**
 * `gantry <group> help <command>` shows that command's help in every group. Commander adds the `help` command only
 * to a command without an action of its own, so `gantry dev help registry` was "too many arguments".
 */
function offerHelpCommands(command: Command): void {
  if (command.commands.length > 0 && !command.commands.some((sub) => sub.name() === 'help')) command.helpCommand(true);
  for (const sub of command.commands) offerHelpCommands(sub);
}

/** The GantryError behind an error: itself, its cause chain, or the members of an AggregateError. */
export function gantryErrorBehind(error: unknown, depth = 0): GantryError | undefined {
  if (error instanceof GantryError) return error;
  if (depth > 5 || !(error instanceof Error)) return undefined;
  if (error instanceof AggregateError) {
    const inner = error.errors.map((e) => gantryErrorBehind(e, depth + 1)).filter((e): e is GantryError => e !== undefined);
    // The most serious wins: a remote failure (3) over a usage error (2) over a failed check (1).
    return inner.sort((a, b) => b.exitCode - a.exitCode)[0];
  }
  return gantryErrorBehind(error.cause, depth + 1);
}

/** Node's file-system errors do not always name the file (`EISDIR: illegal operation on a directory, read`). */
function withPath(message: string, error: unknown): string {
  const { path } = (error ?? {}) as { path?: unknown };
  return typeof path === 'string' && !message.includes(path) && !message.includes(shown(path).slice(1, -1)) ? `${message} (${shown(path)})` : message;
}

/**
 * What a message shows, escaped by `terminalText`: an argument of the command line holding a control character (a path
 * with a newline, a value with an escape sequence) appears escaped whole (`secret/app/d\nb`), wherever it appears —
 * alone or inside a longer path — so it can neither break the message's lines nor hide. Any other such character
 * but the message's own line breaks (a server's error body, a title) is escaped too.
 */
function escapedForTerminal(text: string, argv: readonly string[]): string {
  let out = text;
  for (const argument of argv) {
    if (argument.length > 0 && terminalText(argument) !== argument) out = out.split(argument).join(terminalText(argument));
  }
  return terminalText(out, { lineBreaks: 'keep' });
}

function printError(error: unknown, verbose: boolean, stderr: NodeJS.WritableStream, argv: readonly string[] = []): number {
  if (error instanceof CommanderError) {
    // commander already printed the message and the hint
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  const message = withPath(error instanceof Error ? error.message : String(error), error);
  stderr.write(`error: ${escapedForTerminal(redact(message), argv)}\n`);
  const known = gantryErrorBehind(error);
  // The command's hint where an error has one (flags, environment), never the library's (options): for every group.
  const hintOf = (e: GantryError | undefined) => (e ? (cliHintOf(e) ?? e.hint) : undefined);
  // Several failures at once (an AggregateError): every distinct hint, each naming what it fixes.
  const hints =
    error instanceof AggregateError
      ? [...new Set(error.errors.map((e) => hintOf(gantryErrorBehind(e))).filter((h): h is string => !!h))]
      : hintOf(known)
        ? [hintOf(known)!]
        : [];
  for (const hint of hints) stderr.write(`hint: ${escapedForTerminal(redact(hint), argv)}\n`);
  if (verbose && error instanceof Error && error.stack) stderr.write(`${terminalText(redact(error.stack), { lineBreaks: 'keep' })}\n`);
  const exitCode = known ? known.exitCode : exitCodeForSystemError(error);
  if (!known && exitCode === ExitCode.usage)
    stderr.write(
      'hint: check the path given on the command line or in the configuration: it must exist, be of the right kind (file or folder) and be readable or writable\n',
    );
  else if (!known && !verbose) stderr.write('hint: run again with --verbose for details\n');
  return exitCode;
}

/** Runs the command line and returns the exit code. */
export async function run(argv: string[], streams?: OutputStreams): Promise<number> {
  const verbose = argv.includes('--verbose') || argv.includes('-v');
  const logger = createLogger(verbose ? { level: 'debug' } : {});
  setLogger(logger);
  const out = createOutput(streams);
  const context: CliContext = {
    out,
    logger,
    globals(command) {
      const options = command.optsWithGlobals() as Partial<GlobalOptions>;
      return { json: Boolean(options.json), verbose: Boolean(options.verbose) };
    },
  };
  const program = buildProgram(context, {
    groups: await groupsFor(argv.slice(2)),
    versionFlag: argv.length <= 2 || ['-V', '--version', '-h', '--help'].includes(argv[2]!),
  });
  const stopSaying = sayWaits(out, logger);
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return ExitCode.usage;
    }
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.ok;
  } catch (error) {
    return printError(error, verbose, streams?.stderr ?? process.stderr, argv.slice(2));
  } finally {
    stopSaying();
    setWaitLimits({});
  }
}
