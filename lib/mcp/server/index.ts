// Gantry's context server: its tools over Streamable HTTP behind OAuth 2.1, or over stdio.
export { startContextServer, scopesNeeded, BASIC_SCOPES, type ContextServer, type ContextServerOptions } from './http-server.js';
export { serveStdio, type StdioServerOptions } from './stdio.js';
export {
  createTokenValidator,
  InvalidTokenError,
  type TokenInfo,
  type TokenValidator,
  type TokenValidatorOptions,
  type IntrospectionCredentials,
} from './tokens.js';
export { TOOLS, MCP_SCOPES, ToolRefusal, type ToolDefinition, type ToolContext, type ToolClients } from './tools.js';
export { bearerOf, challenge } from './challenge.js';
