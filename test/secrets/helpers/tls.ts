import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caFile: string;
  otherCaFile: string;
  cert: string;
  key: string;
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA made for the test, a server certificate it signs for 127.0.0.1/localhost, and an unrelated second CA. */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-secrets-pki-'));
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=gantry test CA'], dir);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other.key', '-out', 'other.pem', '-days', '2', '-subj', '/CN=another CA'], dir);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:secrets.internal\n');
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf'], dir);
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    otherCaFile: join(dir, 'other.pem'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
