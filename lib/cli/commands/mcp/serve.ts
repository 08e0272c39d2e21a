// `gantry mcp serve`: the context server over Streamable HTTP behind OAuth 2.1, or over stdio.
import type { Command } from 'commander';
import { usage, type CliContext } from '../../context.js';
import { checkPortFlag, drainDelayOf, listenAsAsked, opsPathsOf, serverLogger, serverOps, startOps, untilDrained, type OpsFlags } from '../../serving.js';

interface ServeFlags extends OpsFlags {
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

export async function serveAction(flags: ServeFlags, command: Command, outer: CliContext): Promise<void> {
  const { json, verbose } = outer.globals(command);
  // Over stdio, stdout is the protocol: the log stays as the command made it (stderr, text).
  const context: CliContext = flags.stdio ? outer : { ...outer, logger: serverLogger(flags, verbose) };
  const env = process.env;
  if (flags.stdio) {
    const { serveStdio } = await import('../../../mcp/index.js');
    // stdout carries the protocol: every word for people goes to stderr, through the logger.
    await serveStdio({ env, logger: context.logger });
    return;
  }
  const port = checkPortFlag(flags.port);
  const drainMs = drainDelayOf(flags);
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
  // Bad input is refused above, before lib/mcp and the MCP SDK load (a second of CPU).
  const { startContextServer } = await import('../../../mcp/index.js');
  const ops = await serverOps('mcp-serve', opsPathsOf(flags, [flags.path, '/.well-known/oauth-protected-resource']));
  const opsServing = await startOps(flags, ops);
  const { metrics } = ops;
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
      opsHandler: opsServing.handle,
      observer: {
        request: (tool, outcome) => metrics.mcpRequests.inc({ tool, outcome }),
        refusal: (reason) => metrics.authRefusals.inc({ reason }),
        keysFetched: () => metrics.jwksRefreshes.inc(),
      },
    }),
  ).catch(async (error: unknown) => {
    await opsServing.close();
    throw error;
  });
  ops.health.check('configuration', () => {});
  // The authorization server's metadata was read at start (or the server would not be serving); its keys, here.
  if (flags.auth) ops.health.check('authorization-server-keys', () => server.keysReady());
  const opsAt = opsServing.where(new URL(server.url).origin)!;
  const announce = () => {
    if (!json) context.out.note(opsAt.note);
    if (json)
      context.out.line(
        JSON.stringify({
          metrics: opsAt.metrics,
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
  };
  await untilDrained(ops, { drainMs, logger: context.logger, announce }, async () => {
    context.logger.info('stopping: no new requests; those in hand finish first (a second Ctrl-C stops at once)');
    await server.stop();
    ops.stop();
    await opsServing.close();
  });
}
