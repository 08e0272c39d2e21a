import { createHash, randomBytes } from 'node:crypto';
import { CheckFailedError } from '../../../errors.js';
import { runningServer, type DemoStep } from './step.js';

/** Store a generated secret in the embedded kv server and read it back, showing only a fingerprint of it. */
export const secretsStep: DemoStep = {
  name: 'secrets',
  description: 'store a secret in the embedded kv server and read it back, never printing it',
  async run({ servers, out, json }) {
    const server = runningServer(servers, 'secrets', 'the embedded kv server');
    const { SecretsClient } = await import('../../../secrets/index.js');
    const client = new SecretsClient({ address: server.url, token: server.credentials.token, sources: { env: {}, pulumi: undefined } });
    try {
      const password = randomBytes(18).toString('base64url');
      const fingerprint = createHash('sha256').update(password).digest('hex').slice(0, 12);
      const { kv, name } = await client.kvAt('secret/demo/database');
      const kvVersion = await kv.version();
      const existing = await kv.read(name);
      const written = await kv.write(name, { username: 'app', password }, { cas: existing.metadata?.version ?? 0 });
      const read = await kv.read(name);
      if (read.state !== 'current' || read.data.password !== password) {
        throw new CheckFailedError(`the secret read back from secret/demo/database differs from the one written (${read.state})`);
      }
      const keys = await kv.list('demo/');
      const result = {
        path: 'secret/demo/database',
        kvVersion,
        version: written.metadata?.version,
        createdTime: written.metadata?.createdTime,
        keys,
        passwordSha256Prefix: fingerprint,
        matched: true,
      };
      if (!json) {
        out.line(`  mount secret/ is kv v${kvVersion} (detected); wrote version ${result.version} of secret/demo/database with check-and-set`);
        out.line(`  read it back: username=app, password <hidden, ${password.length} chars> (sha256 ${fingerprint}...) matches what was written`);
        out.line(`  keys under secret/demo/: ${keys.join(', ')}`);
        // This server and its token end with the demo; `gantry dev` starts one and prints the export line to paste.
        out.line(
          '  try: gantry dev, then in another terminal, paste the export line it prints and: gantry secrets put secret/demo/database username=app password=- (the password from stdin) && gantry secrets get secret/demo/database',
        );
      }
      return result;
    } finally {
      client.close();
    }
  },
};
