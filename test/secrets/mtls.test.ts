// Mutual TLS and a CA folder through SecretsClient, against the embedded kv server requiring a client certificate
// (tls.ca), over real sockets with a CA made in the test.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSecretsServer, type SecretsServer } from '../../devserver/secrets/index.js';
import { SecretsClient, SecretsConnectionError } from '../../lib/secrets/index.js';
import { makeTestPki, type TestPki } from '../peers/tls.js';

describe('secrets client: mutual TLS and SECRETS_CAPATH against the embedded kv server', function () {
  this.timeout(30_000);
  let pki: TestPki;
  let server: SecretsServer;
  let serverLog: string[];
  let caFolder: string;
  let otherCaFolder: string;

  before(async () => {
    pki = makeTestPki();
    // SECRETS_CAPATH names a folder: the test CA alone (and a file that is no certificate, which is skipped), and a
    // folder holding only the unrelated CA
    caFolder = join(pki.dir, 'cas');
    mkdirSync(caFolder);
    copyFileSync(pki.caFile, join(caFolder, 'gantry-test-ca.pem'));
    writeFileSync(join(caFolder, 'README'), 'not a certificate\n');
    otherCaFolder = join(pki.dir, 'other-cas');
    mkdirSync(otherCaFolder);
    copyFileSync(pki.otherCaFile, join(otherCaFolder, 'other.crt'));
    serverLog = [];
    server = await startSecretsServer({ tls: { cert: pki.cert, key: pki.key, ca: pki.ca }, log: (line) => serverLog.push(line) });
  });
  after(async () => {
    await server.stop();
    pki.remove();
  });
  beforeEach(() => {
    serverLog.length = 0;
  });

  const clientWith = (env: Record<string, string>) =>
    new SecretsClient({
      sources: { env: { SECRETS_ADDR: server.url, SECRETS_TOKEN: server.rootToken, SECRETS_MAX_RETRIES: '0', ...env }, pulumi: undefined },
    });
  const certEnv = () => ({ SECRETS_CLIENT_CERT: pki.clientCertFile, SECRETS_CLIENT_KEY: pki.clientKeyFile });

  it('SEC-AUTH-TLS: SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY with SECRETS_CAPATH (a folder holding the CA) write, read and list', async () => {
    const client = clientWith({ SECRETS_CAPATH: caFolder, ...certEnv() });
    try {
      assert.equal(client.config.caPath, caFolder);
      const kv = client.kv('secret');
      await kv.write('mtls/db', { password: 'over-mutual-tls' });
      assert.deepEqual((await kv.read('mtls/db')).data, { password: 'over-mutual-tls' });
      assert.deepEqual(await kv.list('mtls/'), ['db']);
      await client.kv('kv').write('mtls', { v: 1 });
      assert.deepEqual((await client.kv('kv').read('mtls')).data, { v: 1 });
      assert.ok(
        serverLog.every((line) => !line.startsWith('TLS handshake refused')),
        serverLog.join('\n'),
      );
    } finally {
      client.close();
    }
  });

  it('SEC-AUTH-TLS: without a client certificate the request fails with a connection error after one attempt whose hint names the client certificate settings, the server logs why it refused the handshake, and nothing is written', async () => {
    const anonymous = clientWith({ SECRETS_CAPATH: caFolder });
    try {
      const error = await anonymous
        .kv('secret', { kvVersion: 2 })
        .write('mtls/anonymous', { v: 1 })
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsConnectionError, String(error));
      assert.equal(error.code, 'SECRETS_CONNECTION');
      assert.equal(error.exitCode, 3);
      assert.equal(error.attempts, 1);
      assert.match(error.message, /could not complete POST \/v1\/secret\/data\/mtls\/anonymous with the secrets service/);
      assert.ok(!error.message.includes(server.rootToken));
      // Whether the alert or only a reset reaches the client, the hint names the client certificate settings.
      assert.match(error.hint ?? '', /SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY/);
      const readError = await anonymous
        .kv('secret', { kvVersion: 2 })
        .read('mtls/db')
        .catch((e: unknown) => e);
      assert.ok(readError instanceof SecretsConnectionError, String(readError));
      assert.match(readError.hint ?? '', /SECRETS_CLIENT_CERT and SECRETS_CLIENT_KEY/);
    } finally {
      anonymous.close();
    }
    // the server says why: the client presented no certificate
    assert.ok(
      serverLog.some((line) => /^TLS handshake refused: ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE \(.*peer did not return a certificate\)$/.test(line)),
      serverLog.join('\n'),
    );
    assert.ok(
      serverLog.every((line) => line.startsWith('TLS handshake refused')),
      'no request reached the API',
    );
    const client = clientWith({ SECRETS_CAPATH: caFolder, ...certEnv() });
    try {
      assert.equal((await client.kv('secret', { kvVersion: 2 }).read('mtls/anonymous')).state, 'missing');
    } finally {
      client.close();
    }
  });

  it("SEC-AUTH-TLS: a certificate not made for clients (the server's own) is refused too", async () => {
    const wrong = clientWith({ SECRETS_CAPATH: caFolder, SECRETS_CLIENT_CERT: pki.certFile, SECRETS_CLIENT_KEY: pki.keyFile });
    try {
      await assert.rejects(wrong.kv('secret', { kvVersion: 2 }).read('mtls/db'), SecretsConnectionError);
      assert.ok(
        serverLog.some((line) => line.startsWith('TLS handshake refused: ')),
        serverLog.join('\n'),
      );
    } finally {
      wrong.close();
    }
  });

  it('SEC-AUTH-TLS: SECRETS_CAPATH is what is trusted: a folder with only another CA fails verification, with the CA hint', async () => {
    const untrusting = clientWith({ SECRETS_CAPATH: otherCaFolder, ...certEnv() });
    try {
      const error = await untrusting
        .kv('secret', { kvVersion: 2 })
        .read('mtls/db')
        .catch((e: unknown) => e);
      assert.ok(error instanceof SecretsConnectionError, String(error));
      assert.match(error.hint ?? '', /SECRETS_CACERT \/ SECRETS_CAPATH/);
    } finally {
      untrusting.close();
    }
  });
});
