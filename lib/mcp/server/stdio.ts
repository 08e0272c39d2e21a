// `gantry mcp serve --stdio`: the same tools over stdin/stdout, without OAuth (CTX-TRANSPORT-STDIO): the process that
// started this one holds the credentials, in the environment.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { expectOptions } from '../../arguments.js';
import { getLogger, type Logger } from '../../log.js';
import { createMcpServer } from './mcp-server.js';
import { createToolResources, type ToolDefinition } from './tools.js';

export interface StdioServerOptions {
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  tools?: readonly ToolDefinition[];
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** Serves until stdin ends; resolves then. Nothing but protocol messages goes to stdout. */
export async function serveStdio(options: StdioServerOptions = {}): Promise<void> {
  expectOptions('serveStdio', options);
  const env = options.env ?? process.env;
  const logger = options.logger ?? getLogger();
  const resources = createToolResources(env, logger);
  const server = createMcpServer({ env, logger, resources, ...(options.tools ? { tools: options.tools } : {}) });
  const transport = new StdioServerTransport(options.stdin as never, options.stdout as never);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  const stdin = options.stdin ?? process.stdin;
  stdin.once('end', () => void server.close());
  await closed;
  resources.close();
}
