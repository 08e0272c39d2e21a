// One McpServer with Gantry's tools registered: the protocol is the SDK's; what each tool does is tools.ts's.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SetLevelRequestSchema, type CallToolResult, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { isGantryError } from '../../errors.js';
import { teeLogger, type Logger } from '../../log.js';
import { redact } from '../../redact.js';
import { version } from '../../version.js';
import { createLogLevels, heard, type LogLevels } from './log-levels.js';
import { TOOLS, type ToolClients, type ToolDefinition } from './tools.js';

export interface ToolHost {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clients: ToolClients;
  tools?: readonly ToolDefinition[];
  /** Levels set with logging/setLevel, kept across the stateless HTTP server's per-request servers. */
  logLevels?: LogLevels;
  /** Who is calling, for its log level: the token's client and subject; one caller without authorization. */
  caller?: string;
}

export function createMcpServer(host: ToolHost): McpServer {
  const server = new McpServer({ name: 'gantry', title: 'Gantry', version }, { capabilities: { logging: {} } });
  const levels = host.logLevels ?? createLogLevels(1);
  const caller = host.caller ?? '';
  // The SDK keeps the level per session; a stateless server has none, so the level is the caller's (log-levels.ts).
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    levels.set(caller, request.params.level);
    return {};
  });
  for (const tool of host.tools ?? TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: `${tool.description} (scope: ${tool.scope})`,
        inputSchema: tool.input,
        annotations: { readOnlyHint: tool.readOnly, openWorldHint: true },
        _meta: { 'gantry/scope': tool.scope },
      },
      async (args: Record<string, unknown>, extra): Promise<CallToolResult> => {
        const token = extra._meta?.progressToken;
        // A tool's log lines go to the server's log and, at the caller's level, to the caller (notifications/message),
        // masked as every other line; sent on the call's own stream, so a client without a standalone stream hears them.
        const tell = (level: LoggingLevel) => (message: string) => {
          if (!heard(level, levels.get(caller))) return;
          void extra
            .sendNotification({ method: 'notifications/message', params: { level, logger: `gantry.${tool.name}`, data: redact(message) } })
            .catch(() => undefined);
        };
        const toCaller: Logger = { debug: tell('debug'), info: tell('info'), warn: tell('warning'), error: tell('error') };
        const logger = teeLogger(host.logger, toCaller);
        const context = {
          env: host.env,
          logger,
          clients: host.clients,
          signal: extra.signal,
          progress: async (progress: number, total: number, message: string) => {
            toCaller.info(message);
            if (token === undefined) return;
            await extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } })
              .catch(() => undefined);
          },
        };
        try {
          const result = await tool.run(args as never, context);
          const no = tool.verdict?.(result as never);
          const text = JSON.stringify(result, null, 2);
          // A definite "no" is a tool error, so an agent or `gantry mcp call` (exit 1) cannot take it for a pass.
          if (no)
            return {
              isError: true,
              content: [
                { type: 'text', text: no },
                { type: 'text', text },
              ],
              structuredContent: result as Record<string, unknown>,
            };
          return { content: [{ type: 'text', text }], structuredContent: result as Record<string, unknown> };
        } catch (error) {
          return { isError: true, content: [{ type: 'text', text: describeToolError(error) }] };
        }
      },
    );
  }
  return server;
}

/** What the caller reads about a failed tool: the message and the hint, secrets masked; a bug's stack stays in the log. */
function describeToolError(error: unknown): string {
  if (isGantryError(error)) return redact(error.hint ? `${error.message}\n${error.hint}` : error.message);
  if (error instanceof Error && error.name === 'ToolRefusal') return redact(error.message);
  return redact(`the tool failed: ${error instanceof Error ? error.message : String(error)}`);
}
