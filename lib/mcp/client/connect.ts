/**
 * `connectContextServer`: the SDK's Client over its Streamable HTTP transport, sending through `authorizedFetch`, so
 * the protocol is the SDK's and the authorization ours (lib/mcp/client/session.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ErrorCode, McpError, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { expectOptions, expectString } from '../../arguments.js';
import { ExitCode } from '../../errors.js';
import { createHttpClient, type HttpClient, type HttpClientOptions } from '../../http/index.js';
import { version } from '../../version.js';
import type { ElicitationHandler } from './elicitation.js';
import { ContextClientError, peerFailed } from './errors.js';
import { authorizedFetch } from './fetch.js';
import { AuthSession, type AuthorizationOptions } from './session.js';

export interface ConnectOptions extends AuthorizationOptions {
  /** HTTP core settings for every request (proxies, TLS, timeouts); the logger comes from `logger`. */
  http?: Omit<HttpClientOptions, 'logger' | 'baseUrl'>;
  /** The longest wait for an answer's headers and between two pieces of a streamed answer (default 5 min). */
  idleTimeoutMs?: number;
  /** A request that takes longer without progress fails (the SDK's request timeout, reset by progress; default the sign-in timeout plus 1 min). */
  requestTimeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Answers a server's elicitation requests (lib/mcp/client/elicitation.ts: declineElicitation,
   * acceptElicitationDefaults); without it the client declares no elicitation capability and servers ask nothing.
   */
  onElicitation?: ElicitationHandler;
}

export interface CallOptions {
  onProgress?: (progress: Progress) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ContextServerConnection {
  /** The SDK's client, connected and initialized. */
  client: Client;
  /** The canonical server URI the tokens are for. */
  resource: string;
  session: AuthSession;
  /** Every tool, page after page. */
  listTools(options?: { signal?: AbortSignal }): Promise<Tool[]>;
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * The SDK's protocol errors as typed ones: a JSON-RPC error the server answered (an unknown tool, bad arguments: 1;
 * its internal error: 3), an HTTP error status (by status), a request that timed out (3). Others pass as they are.
 */
export function protocolError(error: unknown, what: string): unknown {
  if (error instanceof McpError) {
    const definite = error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound || error.code === ErrorCode.InvalidRequest;
    return new ContextClientError(`${what}: ${error.message}`, {
      code: 'CTX_PROTOCOL_ERROR',
      exitCode: definite ? ExitCode.checkFailed : ExitCode.remote,
      cause: error,
    });
  }
  if (error instanceof StreamableHTTPError) {
    const status = typeof error.code === 'number' && error.code >= 100 ? error.code : undefined;
    return new ContextClientError(`${what}: ${error.message}`, {
      code: 'CTX_PROTOCOL_ERROR',
      exitCode: status !== undefined && !peerFailed(status) ? ExitCode.checkFailed : ExitCode.remote,
      ...(status !== undefined ? { status } : {}),
      cause: error,
    });
  }
  return error;
}

/** Connects to a (protected) context server over Streamable HTTP, signing in as needed. */
export async function connectContextServer(serverUrl: string, options: ConnectOptions = {}): Promise<ContextServerConnection> {
  expectString('connectContextServer', 'serverUrl', serverUrl, "the context server's URL, e.g. https://mcp.example.com/mcp");
  expectOptions('connectContextServer', options);
  const http: HttpClient = createHttpClient({ ...options.http, ...(options.logger ? { logger: options.logger } : {}) });
  let transport: StreamableHTTPClientTransport | undefined;
  try {
    const session = new AuthSession(serverUrl, http, options);
    const fetch = authorizedFetch({ http, authorizer: session, ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}) });
    transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch });
    const onElicitation = options.onElicitation;
    const client = new Client({ name: 'gantry', version }, { capabilities: onElicitation ? { elicitation: { form: { applyDefaults: true } } } : {} });
    if (onElicitation) client.setRequestHandler(ElicitRequestSchema, (request) => onElicitation(request.params));
    const requestOptions = (signal?: AbortSignal, timeoutMs?: number) => ({
      ...(signal ? { signal } : {}),
      // A request may wait for a sign-in in the browser (a 401, a step-up): never less than that wait, plus a minute.
      timeout: timeoutMs ?? options.requestTimeoutMs ?? (options.authorizationTimeoutMs ?? 300_000) + 60_000,
    });
    try {
      await client.connect(transport, requestOptions(options.signal));
    } catch (error) {
      throw protocolError(error, `initializing the session with ${session.resource}`);
    }
    return {
      client,
      resource: session.resource,
      session,
      async listTools(listOptions = {}) {
        const tools: Tool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 1000; page += 1) {
          const result = await client.listTools(cursor ? { cursor } : {}, requestOptions(listOptions.signal)).catch((error: unknown) => {
            throw protocolError(error, `listing the tools of ${session.resource}`);
          });
          tools.push(...result.tools);
          if (!result.nextCursor) return tools;
          cursor = result.nextCursor;
        }
        return tools;
      },
      async callTool(name, args = {}, callOptions = {}) {
        expectString('callTool', 'name', name, 'a tool name');
        const result = await client
          .callTool({ name, arguments: args }, undefined, {
            ...requestOptions(callOptions.signal, callOptions.timeoutMs),
            ...(callOptions.onProgress ? { onprogress: callOptions.onProgress, resetTimeoutOnProgress: true } : {}),
          })
          .catch((error: unknown) => {
            throw protocolError(error, `calling ${name} on ${session.resource}`);
          });
        return result as CallToolResult;
      },
      async close() {
        try {
          await client.close();
        } finally {
          http.close();
        }
      },
    };
  } catch (error) {
    await transport?.close().catch(() => undefined);
    http.close();
    throw error;
  }
}
