/**
 * Runs the embedded kv server in its own process, so a test can kill it with SIGKILL mid-request.
 * Options come as JSON in argv[2]; the address and root token are printed as one JSON line.
 */
import { startSecretsServer, type SecretsServerOptions } from '../../../devserver/secrets/index.js';

const options = JSON.parse(process.argv[2] ?? '{}') as SecretsServerOptions;
const server = await startSecretsServer(options);
process.stdout.write(`${JSON.stringify({ url: server.url, rootToken: server.rootToken })}\n`);
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
