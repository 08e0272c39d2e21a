// `gantry mcp serve --stdio`: the same tools over stdin/stdout, without OAuth (CTX-TRANSPORT-STDIO): the process that
// started this one holds the credentials, in the environment.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { expectOptions } from '../../arguments.js';
import { getLogger, type Logger } from '../../log.js';
import { createMcpServer } from './mcp-server.js';
import { createToolClients, type ToolDefinition } from './tools.js';

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
  const clients = createToolClients(env, logger);
  const server = createMcpServer({ env, logger, clients, ...(options.tools ? { tools: options.tools } : {}) });
  const transport = new StdioServerTransport(options.stdin as never, options.stdout as never);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  // A client that writes its requests and closes stdin (a script's `printf … | gantry mcp serve --stdio`) still gets
  // every answer: at the end of input the server closes once the requests it has received are answered.
  let pending = 0;
  let ended = false;
  const closeWhenIdle = () => {
    if (ended && pending <= 0) void server.close();
  };
  const received = transport.onmessage!;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) pending += 1;
    received(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if ('id' in message && ('result' in message || 'error' in message)) {
      pending -= 1;
      closeWhenIdle();
    }
  };
  const stdin = options.stdin ?? process.stdin;
  stdin.once('end', () => {
    ended = true;
    closeWhenIdle();
  });
  await closed;
  clients.close();
}
