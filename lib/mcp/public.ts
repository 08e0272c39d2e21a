// The `mcp` namespace of the public API (`import { mcp } from 'gantry'`; docs/api.md lists it): the context server,
// the client that signs in to one, and the pieces both are made of. lib/index.ts exports the main names flat as well.
export { startContextServer, serveStdio, createTokenValidator, InvalidTokenError, TOOLS, MCP_SCOPES } from './index.js';
export { connectContextServer, ContextClientError, acceptElicitationDefaults, declineElicitation } from './index.js';
export { canonicalResourceUri, protectedResourceMetadataUrl } from './index.js';
export type { ContextServer, ContextServerOptions, StdioServerOptions, TokenInfo, TokenValidator, TokenValidatorOptions, ToolDefinition } from './index.js';
export type { ConnectOptions, ContextServerConnection, CallOptions, ContextClientErrorCode, CrossAppAccess, ElicitationHandler } from './index.js';
