/**
 * `gantry mcp`: Gantry's tools as a context server (Model Context Protocol) behind OAuth 2.1 (`serve`), and a client
 * that signs in to any protected context server (`tools`, `call`). lib/mcp and the MCP SDK load when a command runs,
 * so `gantry --help` loads none of it.
 */
import type { Command } from 'commander';
import type { CliContext } from '../../context.js';
import { addListenOptions, addOpsOptions } from '../../serving.js';

const serve = () => import('./serve.js');
const client = () => import('./client-actions.js');

/** The client commands' help footer (kept here so that `--help` loads no action). */
const MCP_CLIENT_HELP = `Signing in: the server's 401 names its protected resource metadata (RFC 9728) and authorization server (RFC 8414);
Gantry registers itself there (dynamic registration) unless --client-id names a registered client (its secret, if any,
in --client-secret-file or GANTRY_MCP_CLIENT_SECRET, never a flag's value), and opens the sign-in page in the browser
(--no-browser prints the address instead). The redirect comes back to http://127.0.0.1:<port>/callback. Without a
person: --client-credentials signs in as the client itself (RFC 6749 §4.4) with its secret or its --private-key-file
(private_key_jwt, RFC 7523). Tokens live where \`gantry auth\` keeps them (the OS keyring, else the kv engine, else a
plain-text file only with --store file or --insecure-storage) and are refreshed; a tool that needs more scopes signs in
once more with the merged scopes. A server's request for input (elicitation) is declined, or answered with its form's
defaults with --accept-elicitation-defaults.
Exit codes: 0 success; 1 the tool reported an error, or a refusal (access denied, a scope not granted, a server or
authorization server that breaks the rules); 2 bad input, nothing sent; 3 the server unreachable or failing after retries.`;

const SERVE_HELP = `Every request needs Authorization: Bearer <token>, a token the authorization server issued for this server (its
audience: --resource), with the scope of the tool called (403 insufficient_scope names it). The tools reach their
services with Gantry's own credentials from this process's environment — registry tokens (GANTRY_TOKEN_<host>,
TF_TOKEN_<host>, the Terraform CLI configuration), SECRETS_ADDR and SECRETS_TOKEN, PLATFORM_API_URL and
GANTRY_PLATFORM_TOKEN (or PLATFORM_TOKEN), PAGEANALYSIS_BASE_URL and its key — never with the token a client presents. Tokens that are not JWTs are introspected (RFC 7662) with
GANTRY_MCP_INTROSPECTION_CLIENT_ID and GANTRY_MCP_INTROSPECTION_CLIENT_SECRET. The issuer may also come from
GANTRY_MCP_AUTHORIZATION_SERVER. See docs/mcp.md.
Exit codes: 0 stopped by Ctrl-C, SIGTERM or its reader going away; 1 the authorization server breaks the rules (no
metadata, another issuer, no https off loopback); 2 bad input (a flag, a port in use), before anything listens; 3 the
authorization server unreachable.`;

export function register(program: Command, context: CliContext): void {
  const mcp = program
    .command('mcp')
    .description("the context server (serve: Gantry's tools to agents, behind OAuth 2.1) and a client for protected context servers (tools, call)");

  const serveCommand = addListenOptions(
    mcp
      .command('serve')
      .description(
        'serve modules_resolve, modules_versions, gate_run, secrets_list, secrets_metadata and platform_rate_limit over Streamable HTTP (or --stdio)',
      ),
    { port: '8808', path: '/mcp', pathIs: "the endpoint's path" },
  )
    .option(
      '--authorization-server <issuer>',
      "the OAuth 2.1 authorization server's issuer URL (its RFC 8414 metadata gives the JWKS and introspection endpoints)",
    )
    .option('--resource <uri>', 'the canonical server URI tokens must be issued for (default: the URL this serves)')
    .option('--public-url <url>', 'the URL clients reach this server at, when it is behind a proxy (default: http://<host>:<port><path>)')
    .option('--no-auth', 'serve without authorization (only on a loopback address: anyone who reaches it may call every tool)')
    .option(
      '--allow-origin <origin>',
      "a browser page's origin allowed to call the server (CORS), e.g. http://localhost:6274 for a browser-based MCP client; repeatable (loopback pages are allowed when the server is on loopback)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--stdio', 'speak over stdin/stdout instead: no OAuth, credentials come from the environment');
  addOpsOptions(serveCommand, true);
  serveCommand
    .addHelpText(
      'after',
      `
Examples:
  gantry mcp serve --authorization-server https://auth.example.com --public-url https://mcp.example.com/mcp
  gantry mcp serve --authorization-server http://127.0.0.1:5762     with \`gantry dev oauth\` running
  gantry mcp serve --stdio                                           for an agent that starts Gantry itself (no OAuth)

${SERVE_HELP}`,
    )
    .action(async (flags, command: Command) => (await serve()).serveAction(flags, command, context));

  // `gantry mcp tools <server-url>` and `gantry mcp call <server-url> <tool> [json-args]`: actions in mcpClientActions.ts.
  const collect = (value: string, previous: string[] = []) => [...previous, value];
  const clientOptions = (command: Command) =>
    command
      .option('--scope <scopes>', 'scopes to ask for beyond what the server names (space- or comma-separated, repeatable)', collect)
      .option(
        '--client-id <id>',
        'a client registered with the authorization server (its secret, if any, in GANTRY_MCP_CLIENT_SECRET); default: register dynamically',
      )
      .option('--client-secret-file <file>', "read that client's secret from this file (default GANTRY_MCP_CLIENT_SECRET)")
      .option('--private-key-file <file>', 'authenticate that client with its private key (PEM or JWK) instead of a secret: private_key_jwt')
      .option('--private-key-alg <alg>', "the key's JWS algorithm (RS256, PS256, ES256, ES384, ES512, EdDSA; default: the JWK's, else the key's kind)")
      .option('--client-credentials', 'sign in as the client itself, without a person or a browser (needs --client-id and its secret or key)')
      .option('--accept-elicitation-defaults', "answer a server's request for input with its form's defaults (default: decline)")
      .option('--no-browser', 'print the sign-in address instead of opening a browser')
      .option('--callback-port <n>', 'the loopback port of the redirect http://127.0.0.1:<n>/callback (default: the registered one, else any free port)')
      .option('--timeout <seconds>', 'how long to wait for the sign-in in the browser (default 300)')
      .option('--store <where>', 'where the tokens live: keyring, kv:<mount>/<path> (SECRETS_ADDR), or file (plain text, mode 0600)')
      .option('--insecure-storage', 'allow a plain-text token file when neither the keyring nor the kv engine is reachable');

  clientOptions(mcp.command('tools <server-url>'))
    .description('list the tools of a (protected) context server: name, the scope it needs, description (signing in as needed)')
    .addHelpText(
      'after',
      `\nExamples:\n  gantry mcp tools https://mcp.example.com/mcp\n  gantry mcp tools http://127.0.0.1:8808/mcp --json | jq -r '.[].name'\n\n${MCP_CLIENT_HELP}`,
    )
    .action(async (server: string, flags, command: Command) => (await client()).toolsAction({ server, flags, command, context }));

  clientOptions(mcp.command('call <server-url> <tool> [json-args]'))
    .description('call a tool of a (protected) context server with JSON arguments and print its result (exit 1 when the tool reports an error)')
    .addHelpText(
      'after',
      `\nExamples:\n  gantry mcp call http://127.0.0.1:8808/mcp modules_resolve '{"source": "hashicorp/consul/aws"}'\n  gantry mcp call https://mcp.example.com/mcp gate_run '{"urls": ["https://example.com/"]}' --json\n\n${MCP_CLIENT_HELP}`,
    )
    .action(async (server: string, tool: string, args: string | undefined, flags, command: Command) =>
      (await client()).callAction({ server, flags, command, context }, tool, args),
    );
}
