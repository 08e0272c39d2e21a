// A real S3 peer for tests: moto_server on 127.0.0.1 with an ephemeral port.
// Not a mock — moto speaks the S3 REST protocol over a real socket. A missing moto_server fails loudly.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { S3Client, CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';

export interface S3Peer {
  /** e.g. http://127.0.0.1:41234 — use with forcePathStyle. */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Which server answers (for messages). */
  kind: 'moto';
  /** A client configured for this peer (path-style, checksums only when required). */
  client(): S3Client;
  createBucket(bucket: string): Promise<void>;
  putObject(bucket: string, key: string, body: Uint8Array | string): Promise<void>;
  stop(): Promise<void>;
}

const MOTO_CANDIDATES = [process.env.MOTO_SERVER, '/root/.pyenv/shims/moto_server', '/usr/local/bin/moto_server', '/usr/bin/moto_server'];

function findMoto(): string {
  for (const candidate of MOTO_CANDIDATES) if (candidate && existsSync(candidate)) return candidate;
  throw new Error(
    'S3 peer: moto_server not found (looked at MOTO_SERVER and ' + MOTO_CANDIDATES.slice(1).join(', ') +
      '). Install it with `pip install "moto[server]"` — tests that need S3 cannot run without a real peer.',
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilUp(endpoint: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`S3 peer: moto_server exited with code ${child.exitCode}: ${output()}`);
    try {
      const response = await fetch(endpoint + '/', { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`S3 peer: moto_server did not answer on ${endpoint} within ${timeoutMs} ms: ${output()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts moto_server on 127.0.0.1 on a free port; retries on a port race. */
export async function startS3Peer(options: { timeoutMs?: number } = {}): Promise<S3Peer> {
  const binary = findMoto();
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(binary, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    // If the test run ends without stop() (a crash, mocha --exit), moto must not outlive it.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.once('exit', () => process.off('exit', killOnExit));
    let log = '';
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-2000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    try {
      await waitUntilUp(endpoint, child, () => log, options.timeoutMs ?? 30000);
    } catch (error) {
      lastError = error;
      await stopChild(child);
      continue;
    }
    const region = 'us-east-1';
    const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
    const clients: S3Client[] = [];
    const client = () => {
      const c = new S3Client({
        endpoint,
        region,
        credentials,
        forcePathStyle: true,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      clients.push(c);
      return c;
    };
    let shared: S3Client | undefined;
    const sharedClient = () => (shared ??= client());
    return {
      endpoint,
      region,
      credentials,
      kind: 'moto',
      client,
      async createBucket(bucket) {
        await sharedClient().send(new CreateBucketCommand({ Bucket: bucket }));
      },
      async putObject(bucket, key, body) {
        await sharedClient().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      },
      async stop() {
        for (const c of clients) c.destroy();
        await stopChild(child);
      },
    };
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}
