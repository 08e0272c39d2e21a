import { expectOptions } from '../arguments.js';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { UsageError } from '../errors.js';
import { readLocalTextSync } from '../local-paths.js';

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
  /** Where each path came from, for messages: `{ caFile: '--ca-cert' }`, `{ caPath: 'SECRETS_CAPATH' }`. */
  sources?: { caFile?: string; caPath?: string; certFile?: string; keyFile?: string };
}

export interface AgentTlsOptions {
  ca?: string[];
  cert?: string;
  key?: string;
  servername?: string;
  rejectUnauthorized: boolean;
}

/** "the CA certificate file (--ca-cert)": what a path is, and where it came from when known. */
function named(what: string, source: string | undefined): string {
  return source ? `the ${what} (${source})` : `the ${what}`;
}

/**
 * A PEM file, read whole: a regular file of at most a few MB (a device such as /dev/zero, a FIFO or a folder is
 * refused before anything is read or sent, never read without end).
 */
function readPem(file: string, what: string, source?: string): string {
  return readLocalTextSync(file, { what: named(what, source), hint: `give the path of a PEM file for ${named(what, source)}` });
}

/** Loads the files named in `options` into the options Node's TLS agent takes. */
export function loadTlsOptions(options: TlsOptions = {}): AgentTlsOptions {
  expectOptions('loadTlsOptions', options);
  const result: AgentTlsOptions = { rejectUnauthorized: !options.skipVerify };
  const extra: string[] = [];
  const sources = options.sources ?? {};
  if (options.caFile) extra.push(readPem(options.caFile, 'CA certificate file', sources.caFile));
  if (options.caPath) {
    let entries: string[];
    try {
      entries = readdirSync(options.caPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const problem = code === 'ENOTDIR' ? 'is not a folder' : code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? (error as Error).message})`;
      throw new UsageError(`${named('CA folder', sources.caPath)} ${options.caPath} ${problem}`, {
        code: 'PATH_NOT_READABLE',
        hint: 'give a folder of PEM files, or a CA bundle file with the CA certificate file setting',
      });
    }
    // Any name: OpenSSL's c_rehash folders hold `<hash>.0` links. A file that holds no PEM certificate (a README, a
    // CRL) and a link to nothing are passed over; a folder with no certificate at all is a mistake worth stopping on.
    const found: string[] = [];
    for (const entry of entries.sort()) {
      const file = join(options.caPath, entry);
      if (!statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
      const pem = readPem(file, `CA certificate in the CA folder${sources.caPath ? ` (${sources.caPath})` : ''}`);
      if (pem.includes('-----BEGIN CERTIFICATE-----')) found.push(pem);
    }
    if (found.length === 0) {
      throw new UsageError(`${named('CA folder', sources.caPath)} ${options.caPath} holds no PEM certificate`, {
        hint: "point it at a folder of PEM files (any name, such as c_rehash's <hash>.0), or use a CA bundle file instead",
      });
    }
    extra.push(...found);
  }
  if (extra.length > 0) result.ca = [...rootCertificates, ...extra];
  if (options.certFile || options.keyFile) {
    if (!options.certFile || !options.keyFile) {
      throw new UsageError('a client certificate needs both a certificate file and a key file');
    }
    result.cert = readPem(options.certFile, 'client certificate', sources.certFile);
    result.key = readPem(options.keyFile, 'client key', sources.keyFile);
  }
  if (options.serverName) result.servername = options.serverName;
  return result;
}
