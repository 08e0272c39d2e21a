/**
 * `gantry mcp`: Gantry's tools as a context server (Model Context Protocol) behind OAuth 2.1 (`serve`), and a client
 * that signs in to any protected context server (`tools`, `call`). lib/mcp and the MCP SDK load when a command runs,
 * so `gantry --help` loads none of it.
 */
import type { Command } from 'commander';
import type { CliContext } from './context.js';

const serve = () => import('./mcpServe.js');

const SERVE_HELP = `Every request needs Authorization: Bearer <token>, a token the authorization server issued for this server (its
audience: --resource), with the scope of the tool called (403 insufficient_scope names it). The tools reach their
services with Gantry's own credentials from this process's environment — registry tokens (TF_TOKEN_<host>, the
Terraform CLI configuration), SECRETS_ADDR and SECRETS_TOKEN, PLATFORM_API_URL and PLATFORM_TOKEN, PAGEANALYSIS_BASE_URL
and its key — never with the token a client presents. Tokens that are not JWTs are introspected (RFC 7662) with
GANTRY_MCP_INTROSPECTION_CLIENT_ID and GANTRY_MCP_INTROSPECTION_CLIENT_SECRET. The issuer may also come from
GANTRY_MCP_AUTHORIZATION_SERVER. See docs/mcp.md.`;

export function register(program: Command, context: CliContext): void {
  const mcp = program
    .command('mcp')
    .description('the context server (serve: Gantry\'s tools to agents, behind OAuth 2.1) and a client for protected context servers (tools, call)');

  mcp
    .command('serve')
    .description('serve modules_resolve, modules_versions, gate_run, secrets_list, secrets_metadata and platform_rate_limit over Streamable HTTP (or --stdio)')
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option('--port <port>', 'the port to listen on (0: any free port)', '8808')
    .option('--path <path>', 'the endpoint\'s path', '/mcp')
    .option('--authorization-server <issuer>', 'the OAuth 2.1 authorization server\'s issuer URL (its RFC 8414 metadata gives the JWKS and introspection endpoints)')
    .option('--resource <uri>', 'the canonical server URI tokens must be issued for (default: the URL this serves)')
    .option('--public-url <url>', 'the URL clients reach this server at, when it is behind a proxy (default: http://<host>:<port><path>)')
    .option('--no-auth', 'serve without authorization (only on a loopback address: anyone who reaches it may call every tool)')
    .option('--stdio', 'speak over stdin/stdout instead: no OAuth, credentials come from the environment')
    .addHelpText('after', `
Examples:
  gantry mcp serve --authorization-server https://auth.example.com --public-url https://mcp.example.com/mcp
  gantry mcp serve --authorization-server http://127.0.0.1:5762     with \`gantry dev oauth\` running
  gantry mcp serve --stdio                                           for an agent that starts Gantry itself (no OAuth)

${SERVE_HELP}`)
    .action(async (flags, command: Command) => (await serve()).serveAction(flags, command, context));

  // `gantry mcp tools <server-url>` and `gantry mcp call <server-url> <tool> [json-args]`: actions in mcpClientActions.ts.
}
