import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  ca: string;
  cert: string;
  key: string;
  clientCert: string;
  clientKey: string;
  /** A second, unrelated CA: trusting it alone must not make the server trusted. */
  otherCaFile: string;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A throwaway certificate authority made with the system's openssl: a CA, a server certificate for
 * `names` (default localhost and 127.0.0.1) and a client certificate, all signed by the CA.
 */
export function makeTestPki(names: string[] = ['localhost', '127.0.0.1']): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-pki-'));
  const san = names.map((n) => (/^[\d.]+$/.test(n) || n.includes(':') ? `IP:${n}` : `DNS:${n}`)).join(',');
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=Gantry Test CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const issue = (name: string, subject: string, extensions: string) => {
    openssl(
      ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`],
      dir,
    );
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-out',
        `${name}.pem`,
        '-extfile',
        `${name}.ext`,
      ],
      dir,
    );
  };
  issue('server', `/CN=${names[0]}`, `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  issue('client', '/CN=gantry-test-client', 'extendedKeyUsage=clientAuth\n');
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=Another CA',
      '-keyout',
      'other.key',
      '-out',
      'other.pem',
    ],
    dir,
  );
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    certFile: join(dir, 'server.pem'),
    keyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.pem'),
    clientKeyFile: join(dir, 'client.key'),
    ca: read('ca.pem'),
    cert: read('server.pem'),
    key: read('server.key'),
    clientCert: read('client.pem'),
    clientKey: read('client.key'),
    otherCaFile: join(dir, 'other.pem'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
