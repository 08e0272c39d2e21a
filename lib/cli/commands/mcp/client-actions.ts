// The client actions of `gantry mcp`: `tools` lists a protected context server's tools, `call` calls one. Everything
// the command line says is checked before anything is sent (exit 2); signing in opens the browser (or prints the
// address) and keeps the tokens where `gantry auth` keeps them. lib/mcp/client and the MCP SDK load with the action.
import { terminalText } from '../../../terminal-text.js';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CheckFailedError, shown } from '../../../errors.js';
import { describeJsonSyntaxProblem } from '../../../json-syntax.js';
import type { ConnectOptions, ContextServerConnection } from '../../../mcp/index.js';
import { usage, type CliContext } from '../../context.js';
import { onStdoutReaderGone } from '../../reader-gone.js';
import type { CliErrorCode } from '../../error-codes.js';

export interface ClientFlags {
  scope?: string[];
  clientId?: string;
  clientSecretFile?: string;
  privateKeyFile?: string;
  privateKeyAlg?: string;
  clientCredentials?: boolean;
  acceptElicitationDefaults?: boolean;
  browser?: boolean;
  callbackPort?: string;
  store?: string;
  insecureStorage?: boolean;
  timeout?: string;
}

const mcpClient = () => import('../../../mcp/index.js');

/** The server URL, checked as the client will use it (exit 2 before anything is sent). */
async function serverUrl(raw: string): Promise<string> {
  const { canonicalServerUri } = await mcpClient();
  canonicalServerUri(raw, 'the server URL');
  return raw;
}

function checkPort(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 65_535)
    throw usage(
      `--callback-port ${shown(raw.slice(0, 20))} is no port number`,
      "give 1–65535, or leave it out for any free port (a registered client's port is reused)",
    );
  return Number(raw);
}

function checkTimeout(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 3600) throw usage(`--timeout ${shown(raw.slice(0, 20))} is not a number of seconds (1–3600)`);
  return Number(raw) * 1000;
}

function scopes(flags: ClientFlags): string[] {
  const list = (flags.scope ?? []).flatMap((value) => value.split(/[\s,]+/)).filter(Boolean);
  for (const scope of list) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
      throw usage(`--scope ${shown(scope.slice(0, 80))} is no OAuth scope (RFC 6749 §3.3: printable ASCII without spaces, quotes or backslashes)`);
  }
  return list;
}

function clientId(flags: ClientFlags): string | undefined {
  if (flags.clientId === undefined) return undefined;
  if (flags.clientId === '' || flags.clientId.length > 512 || shown(flags.clientId) !== flags.clientId)
    throw usage('--client-id is empty, longer than 512 characters or holds control characters');
  return flags.clientId;
}

/** The private key file's text (PEM or JWK); whether it is a key is checked by the library before anything is sent. */
async function privateKeyText(flags: ClientFlags): Promise<string | undefined> {
  if (flags.privateKeyFile === undefined) return undefined;
  try {
    return await readFile(flags.privateKeyFile, 'utf8');
  } catch (error) {
    throw usage(
      `--private-key-file ${shown(flags.privateKeyFile.slice(0, 200))}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      "give a readable file holding the client's private key (PEM, or a JWK as JSON)",
    );
  }
}

/**
 * The sign-in without a person: --client-credentials (the client's secret from --client-secret-file or
 * GANTRY_MCP_CLIENT_SECRET, or its --private-key-file). Secrets and keys come from files or the environment, never a
 * flag's value; the library registers them with the redactor and checks them (exit 2) before anything is sent.
 */
async function clientCredentialOptions(flags: ClientFlags): Promise<Partial<ConnectOptions>> {
  const secretFile = flags.clientSecretFile;
  if (secretFile !== undefined && flags.privateKeyFile !== undefined)
    throw usage('--client-secret-file and --private-key-file both given', 'the client authenticates with one: its secret or its private key');
  if (flags.privateKeyAlg !== undefined && flags.privateKeyFile === undefined) throw usage('--private-key-alg needs --private-key-file');
  const { readClientSecretFile } = await import('../../../auth/index.js');
  const clientSecret = secretFile !== undefined ? await readClientSecretFile(secretFile, '--client-secret-file') : undefined;
  const privateKey = await privateKeyText(flags);
  return {
    ...(clientSecret !== undefined ? { clientSecret } : {}),
    ...(privateKey !== undefined ? { privateKey } : {}),
    ...(flags.privateKeyAlg !== undefined ? { privateKeyAlg: flags.privateKeyAlg } : {}),
    ...(flags.clientCredentials === true ? { clientCredentials: true } : {}),
  };
}

/** The system's browser opener, when there is a display to open one on; false when none could be started. */
function openInBrowser(url: string): boolean {
  const platform = process.platform;
  const command = platform === 'darwin' ? 'open' : platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  if (platform !== 'darwin' && platform !== 'win32' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return false;
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/** The options every client action shares: the sign-in, the token store, the browser. */
async function connectOptions(flags: ClientFlags, context: CliContext, env: NodeJS.ProcessEnv): Promise<ConnectOptions> {
  const id = clientId(flags);
  const port = checkPort(flags.callbackPort);
  const timeoutMs = checkTimeout(flags.timeout);
  const asked = scopes(flags);
  const credentials = await clientCredentialOptions(flags);
  const { acceptElicitationDefaults, declineElicitation } = await mcpClient();
  const stderr = process.stderr;
  return {
    ...(id !== undefined ? { clientId: id } : {}),
    ...credentials,
    // Nobody to ask: a server's request for input is declined (said on stderr), or with --accept-elicitation-defaults
    // answered with the defaults its form offers.
    onElicitation: async (request) => {
      const answer = await (flags.acceptElicitationDefaults === true ? acceptElicitationDefaults : declineElicitation)(request);
      stderr.write(
        `The server asked for input (${terminalText(request.message.slice(0, 200))}): ${answer.action === 'accept' ? 'accepted with its defaults' : 'declined'}.\n`,
      );
      return answer;
    },
    ...(port !== undefined ? { callbackPort: port } : {}),
    ...(timeoutMs !== undefined ? { authorizationTimeoutMs: timeoutMs } : {}),
    ...(asked.length > 0 ? { scopes: asked } : {}),
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    insecureStorage: flags.insecureStorage === true,
    // GANTRY_MCP_CLIENT_SECRET, GANTRY_CONFIG_DIR, SECRETS_*: read by the library, as a program's would be.
    env,
    // The kv engine as `gantry auth` and the library reach it (SECRETS_ADDR and SECRETS_TOKEN); its sockets are
    // released at the end. Messages about the store name the flags.
    kv: (await import('../auth/actions.js')).kvFactory(env),
    storeNames: (await import('../../../auth/index.js')).storeFlagNames,
    logger: context.logger,
    openUrl: (url) => {
      if (flags.browser !== false && openInBrowser(url)) {
        stderr.write(`Opening the sign-in page in your browser. If it does not open, visit:\n  ${terminalText(url)}\n`);
      } else {
        stderr.write(`To sign in, open this address in a browser on this machine (the answer comes back to 127.0.0.1):\n  ${terminalText(url)}\n`);
      }
    },
  };
}

/** What `gantry mcp tools` and `call` are given: the server's address, their flags and the command's context. */
export interface ClientRun {
  server: string;
  flags: ClientFlags;
  command: Command;
  context: CliContext;
  env?: NodeJS.ProcessEnv;
}

/**
 * Runs `use` with a connection to the run's server, closed however it ends; the reader of stdout going away ends it
 * quietly. `check` refuses the action's own bad input after the address and before the sign-in options are read.
 */
async function withConnection(
  run: ClientRun,
  use: (connection: ContextServerConnection, signal: AbortSignal, url: string) => Promise<void>,
  check: () => void = () => undefined,
): Promise<void> {
  const url = await serverUrl(run.server);
  check();
  const options = await connectOptions(run.flags, run.context, run.env ?? process.env);
  const { connectContextServer } = await mcpClient();
  const { releaseClients } = await import('../auth/actions.js');
  const controller = new AbortController();
  const unregister = onStdoutReaderGone(() => controller.abort());
  try {
    const connection = await connectContextServer(url, { ...options, signal: controller.signal });
    try {
      await use(connection, controller.signal, url);
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      await connection.close().catch(() => undefined);
    }
  } finally {
    unregister();
    releaseClients();
  }
}

/** The scope a tool needs, where its listing says: `_meta["gantry/scope"]`, annotations, or "(scope: …)" in its description. */
export function requiredScope(tool: { description?: string | undefined; annotations?: unknown; _meta?: unknown }): string | undefined {
  const meta = tool._meta as Record<string, unknown> | undefined;
  for (const key of ['gantry/scope', 'scope', 'requiredScope']) if (typeof meta?.[key] === 'string') return meta[key];
  const annotations = tool.annotations as Record<string, unknown> | undefined;
  if (typeof annotations?.scope === 'string') return annotations.scope;
  return /\(scopes?:\s*([^)]+)\)/i.exec(tool.description ?? '')?.[1]?.trim();
}

export async function toolsAction(run: ClientRun): Promise<void> {
  const { context } = run;
  const { json } = context.globals(run.command);
  await withConnection(run, async (connection, signal) => {
    const tools = await connection.listTools({ signal });
    if (json) {
      context.out.json(tools.map((tool) => ({ ...tool, requiredScope: requiredScope(tool) ?? null })));
      return;
    }
    if (tools.length === 0) {
      context.out.note(`${connection.resource} offers no tools.`);
      return;
    }
    context.out.table(tools, [
      { header: 'name', value: (tool) => tool.name },
      { header: 'scope', value: (tool) => requiredScope(tool) },
      {
        header: 'description',
        value: (tool) =>
          (tool.description ?? '')
            .replace(/\s*\(scopes?:[^)]*\)\s*$/i, '')
            .replace(/\s+/g, ' ')
            .replace(/^(.{99}).{2,}$/, '$1…'),
      },
    ]);
  });
}

/** The JSON arguments of `call`: an object, checked before anything is sent. */
export function parseToolArguments(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw usage(
      `the tool arguments are not JSON: ${describeJsonSyntaxProblem(raw)}`,
      'give one JSON object in single quotes, e.g. \'{"source": "hashicorp/consul/aws"}\'',
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw usage('the tool arguments must be a JSON object', 'e.g. \'{"source": "hashicorp/consul/aws"}\' (or nothing for a tool without arguments)');
  return value as Record<string, unknown>;
}

export async function callAction(run: ClientRun, tool: string, rawArgs: string | undefined): Promise<void> {
  const { context } = run;
  const { json } = context.globals(run.command);
  let args: Record<string, unknown> = {};
  const check = () => {
    if (tool.trim() === '' || shown(tool) !== tool || tool.length > 128)
      throw usage(`the tool name ${shown(tool.slice(0, 80))} is not a tool name`, 'gantry mcp tools <server-url> lists them');
    args = parseToolArguments(rawArgs);
  };
  await withConnection(
    run,
    async (connection, signal, url) => {
      let progress: ReturnType<CliContext['out']['progress']> | undefined;
      const result = await connection.callTool(tool, args, {
        signal,
        onProgress: (p) => {
          progress ??= context.out.progress(tool, p.total);
          progress.update(p.progress, p.total, p.message ?? '');
        },
      });
      progress?.done();
      if (json) context.out.json(result);
      else {
        for (const item of result.content ?? []) {
          if (item.type === 'text') context.out.line(item.text);
          else if (item.type === 'resource_link') context.out.line(`${terminalText(item.name)}: ${terminalText(item.uri)}`);
          else
            context.out.note(
              `(${item.type} content${'mimeType' in item && item.mimeType ? `, ${terminalText(String(item.mimeType))}` : ''}: use --json to see it)`,
            );
        }
        if ((result.content ?? []).length === 0 && result.structuredContent !== undefined) context.out.line(JSON.stringify(result.structuredContent, null, 2));
      }
      if (result.isError) {
        // The SDK's servers answer a call of a tool they do not have with an error result ("Tool x not found").
        const text = (result.content ?? []).map((item) => (item.type === 'text' ? item.text : '')).join(' ');
        const unknown = /\btool\b.*\bnot found\b/i.test(text);
        throw new CheckFailedError(
          unknown ? `the server has no tool ${tool}` : `the tool ${tool} reported an error${json ? ' (isError in the result above)' : ' (above)'}`,
          {
            code: 'MCP_TOOL_ERROR' satisfies CliErrorCode,
            hint: unknown ? `gantry mcp tools ${url} lists them` : "check its arguments: gantry mcp tools <server-url> --json shows each tool's input schema",
          },
        );
      }
    },
    check,
  );
}
