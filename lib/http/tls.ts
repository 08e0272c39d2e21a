import { expectOptions } from '../arguments.js';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { UsageError } from '../errors.js';

export interface TlsOptions {
  /** A PEM bundle file of CA certificates to trust (in addition to the system's). */
  caFile?: string;
  /** A folder of PEM files to trust (every file that holds a certificate, whatever its name). */
  caPath?: string;
  /** PEM client certificate and key for mutual TLS. */
  certFile?: string;
  keyFile?: string;
  /** The name to send in SNI and to verify the certificate against. */
  serverName?: string;
  /** Skip certificate verification. Dangerous: logs a warning. */
  skipVerify?: boolean;
}

export interface AgentTlsOptions {
  ca?: string[];
  cert?: string;
  key?: string;
  servername?: string;
  rejectUnauthorized: boolean;
}

function readPem(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the ${what} ${file}: ${(error as Error).message}`, {
      hint: `check the path given for the ${what}`,
      cause: error,
    });
  }
}

/** Loads the files named in `options` into the options Node's TLS agent takes. */
export function loadTlsOptions(options: TlsOptions = {}): AgentTlsOptions {
  expectOptions('loadTlsOptions', options);
  const result: AgentTlsOptions = { rejectUnauthorized: !options.skipVerify };
  const extra: string[] = [];
  if (options.caFile) extra.push(readPem(options.caFile, 'CA certificate file'));
  if (options.caPath) {
    let entries: string[];
    try {
      entries = readdirSync(options.caPath);
    } catch (error) {
      throw new UsageError(`cannot read the CA folder ${options.caPath}: ${(error as Error).message}`, { cause: error });
    }
    // Any name: OpenSSL's c_rehash folders hold `<hash>.0` links. A file that holds no PEM certificate (a README, a
    // CRL) and a link to nothing are passed over; a folder with no certificate at all is a mistake worth stopping on.
    const found: string[] = [];
    for (const entry of entries.sort()) {
      const file = join(options.caPath, entry);
      if (!statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
      const pem = readPem(file, 'CA certificate');
      if (pem.includes('-----BEGIN CERTIFICATE-----')) found.push(pem);
    }
    if (found.length === 0) {
      throw new UsageError(`the CA folder ${options.caPath} holds no PEM certificate`, { hint: 'point it at a folder of PEM files (any name, such as c_rehash\'s <hash>.0), or use a CA bundle file instead' });
    }
    extra.push(...found);
  }
  if (extra.length > 0) result.ca = [...rootCertificates, ...extra];
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) {
      throw new UsageError('a client certificate needs both a certificate file and a key file');
    }
    result.cert = readPem(options.certFile, 'client certificate');
    result.key = readPem(options.keyFile, 'client key');
  }
  if (options.serverName) result.servername = options.serverName;
  return result;
}
