// Runs the embedded kv server in its own process for the crash test: prints {url, token} once listening.
import { startSecretsServer } from '../../../devserver/secrets/index.js';

const dataFile = process.argv[2];
const server = await startSecretsServer({ dataFile, rootToken: 'child-root' });
process.stdout.write(`${JSON.stringify({ url: server.url, token: server.rootToken })}\n`);
