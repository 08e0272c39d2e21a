// `gantry mcp serve`: the context server over Streamable HTTP behind OAuth 2.1, or over stdio.
import type { Command } from 'commander';
import { usage, type CliContext } from '../../context.js';
import { checkPortFlag, listenAsAsked, untilInterrupted } from '../../serving.js';

interface ServeFlags {
  host: string;
  port: string;
  path: string;
  authorizationServer?: string;
  resource?: string;
  publicUrl?: string;
  auth: boolean;
  allowOrigin?: string[];
  stdio?: boolean;
}

export async function serveAction(flags: ServeFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  const env = process.env;
  const { startContextServer, serveStdio } = await import('../../../mcp/index.js');
  if (flags.stdio) {
    // stdout carries the protocol: every word for people goes to stderr, through the logger.
    await serveStdio({ env, logger: context.logger });
    return;
  }
  const port = checkPortFlag(flags.port);
  const issuer = flags.authorizationServer ?? (env.GANTRY_MCP_AUTHORIZATION_SERVER || undefined);
  const introspectionId = env.GANTRY_MCP_INTROSPECTION_CLIENT_ID || undefined;
  const introspectionSecret = env.GANTRY_MCP_INTROSPECTION_CLIENT_SECRET || undefined;
  if ((introspectionId === undefined) !== (introspectionSecret === undefined)) {
    throw usage(
      'introspection needs both GANTRY_MCP_INTROSPECTION_CLIENT_ID and GANTRY_MCP_INTROSPECTION_CLIENT_SECRET',
      'set both, or neither to accept JWT access tokens only',
    );
  }
  if (flags.auth === false && flags.authorizationServer !== undefined) throw usage('--no-auth and --authorization-server contradict each other');
  const server = await listenAsAsked({ host: flags.host, port, portFlag: '--port' }, () =>
    startContextServer({
      host: flags.host,
      port,
      path: flags.path,
      auth: flags.auth,
      ...(flags.auth && issuer !== undefined ? { authorizationServer: issuer } : {}),
      ...(flags.resource !== undefined ? { resource: flags.resource } : {}),
      ...(flags.publicUrl !== undefined ? { publicUrl: flags.publicUrl } : {}),
      ...(flags.allowOrigin !== undefined ? { allowedOrigins: flags.allowOrigin } : {}),
      ...(introspectionId && introspectionSecret ? { introspection: { clientId: introspectionId, clientSecret: introspectionSecret } } : {}),
      env,
      logger: context.logger,
    }),
  );
  if (json)
    context.out.line(
      JSON.stringify({
        url: server.url,
        resource: server.resource,
        resourceMetadata: flags.auth ? server.resourceMetadataUrl : null,
        authorizationServer: server.authorizationServer ?? null,
      }),
    );
  else if (flags.auth)
    context.out.line(
      `context server on ${server.url} (tokens for ${server.resource} from ${server.authorizationServer}; metadata at ${server.resourceMetadataUrl})`,
    );
  else context.out.line(`context server on ${server.url} (no authorization: loopback only)`);
  await untilInterrupted(() => server.stop());
}
