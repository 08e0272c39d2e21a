// One McpServer with Gantry's tools registered: the protocol is the SDK's; what each tool does is tools.ts's.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isGantryError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { redact } from '../../redact.js';
import { version } from '../../version.js';
import { TOOLS, type ToolClients, type ToolDefinition } from './tools.js';

export interface ToolHost {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clients: ToolClients;
  tools?: readonly ToolDefinition[];
}

export function createMcpServer(host: ToolHost): McpServer {
  const server = new McpServer({ name: 'gantry', title: 'Gantry', version });
  for (const tool of host.tools ?? TOOLS) {
    server.registerTool(tool.name, {
      title: tool.title,
      description: `${tool.description} (scope: ${tool.scope})`,
      inputSchema: tool.input,
      annotations: { readOnlyHint: tool.readOnly, openWorldHint: true },
      _meta: { 'gantry/scope': tool.scope },
    }, async (args: Record<string, unknown>, extra): Promise<CallToolResult> => {
      const token = extra._meta?.progressToken;
      const context = {
        env: host.env,
        logger: host.logger,
        clients: host.clients,
        signal: extra.signal,
        progress: async (progress: number, total: number, message: string) => {
          if (token === undefined) return;
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } }).catch(() => undefined);
        },
      };
      try {
        const result = await tool.run(args as never, context);
        const no = tool.verdict?.(result as never);
        const text = JSON.stringify(result, null, 2);
        // A definite "no" is a tool error, so an agent or `gantry mcp call` (exit 1) cannot take it for a pass.
        if (no) return { isError: true, content: [{ type: 'text', text: no }, { type: 'text', text }], structuredContent: result as Record<string, unknown> };
        return { content: [{ type: 'text', text }], structuredContent: result as Record<string, unknown> };
      } catch (error) {
        return { isError: true, content: [{ type: 'text', text: describeToolError(error) }] };
      }
    });
  }
  return server;
}

/** What the caller reads about a failed tool: the message and the hint, secrets masked; a bug's stack stays in the log. */
function describeToolError(error: unknown): string {
  if (isGantryError(error)) return redact(error.hint ? `${error.message}\n${error.hint}` : error.message);
  if (error instanceof Error && error.name === 'ToolRefusal') return redact(error.message);
  return redact(`the tool failed: ${error instanceof Error ? error.message : String(error)}`);
}
