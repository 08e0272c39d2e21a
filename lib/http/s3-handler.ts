// The S3 clients' side of the outgoing proxies: the AWS SDK sends through @smithy/node-http-handler, whose http and
// https agents are set to the proxy agents of proxy.ts, so S3 honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY as every
// other connection does. A file of its own, not exported from lib/http/index.ts: only the modules that build an S3
// client load the SDK's handler.
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createProxyAgents, proxySettingsFromEnv } from './proxy.js';

/**
 * The S3Client settings that route it through the environment's proxies: `{ requestHandler }` when a proxy is set,
 * nothing (the SDK's own handler) when none is. The SDK's handler keeps 50 sockets per host; so do these agents.
 */
export function s3ProxyConfig(env: NodeJS.ProcessEnv = process.env): { requestHandler?: NodeHttpHandler } {
  const settings = proxySettingsFromEnv(env);
  if (!settings.httpProxy && !settings.httpsProxy) return {};
  const agents = createProxyAgents(settings, { maxSockets: 50 });
  return { requestHandler: new NodeHttpHandler({ httpAgent: agents.http, httpsAgent: agents.https }) };
}
