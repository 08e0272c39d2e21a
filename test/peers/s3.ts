// A real S3 peer for tests: s3rver (the npm devDependency, installed by `npm ci`) on 127.0.0.1 with an ephemeral
// port, in its own process, storing in a fresh temporary folder that stop() removes. Not a mock — s3rver speaks the
// S3 REST protocol over a real socket. It knows one key pair, S3RVER / S3RVER: a request signed with any other access
// key id is refused (InvalidAccessKeyId), and presigned URLs are refused once expired; SigV4 signatures themselves are
// not recomputed by s3rver 3.7.1.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3Client, CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';

export interface S3Peer {
  /** e.g. http://127.0.0.1:41234 — use with forcePathStyle. */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Which server answers (for messages). */
  kind: 's3rver';
  /** A client configured for this peer (path-style, checksums only when required). */
  client(): S3Client;
  createBucket(bucket: string): Promise<void>;
  putObject(bucket: string, key: string, body: Uint8Array | string): Promise<void>;
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('./s3rver-main.mjs', import.meta.url));

/** Waits for the child's {"port": N} line; fails with its output if it exits or stays silent. */
function waitForPort(child: ChildProcess, output: () => string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    const finish = (error: Error | undefined, port?: number) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolve(port!);
    };
    const onData = (chunk: Buffer) => {
      stdout += chunk.toString();
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      try {
        const { port } = JSON.parse(stdout.slice(0, newline)) as { port: unknown };
        if (typeof port === 'number' && port > 0) return finish(undefined, port);
      } catch {
        // fall through
      }
      finish(new Error(`S3 peer: s3rver printed ${JSON.stringify(stdout.slice(0, newline))} instead of its port: ${output()}`));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(
        new Error(
          `S3 peer: s3rver exited (${signal ?? `code ${code}`}) before listening: ${output()}` +
            (/ERR_MODULE_NOT_FOUND|Cannot find (module|package) 's3rver'/.test(output()) ? ' — s3rver is a devDependency: run `npm ci`' : ''),
        ),
      );
    const onError = (error: Error) => finish(new Error(`S3 peer: could not start s3rver: ${error.message}`));
    const timer = setTimeout(() => finish(new Error(`S3 peer: s3rver did not listen within ${timeoutMs} ms: ${output()}`)), timeoutMs);
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
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

/** Starts s3rver on 127.0.0.1 on a port the kernel picks (port 0), in a fresh temporary folder. */
export async function startS3Peer(options: { timeoutMs?: number } = {}): Promise<S3Peer> {
  const directory = mkdtempSync(join(tmpdir(), 'gantry-s3rver-'));
  // stdin stays open as a pipe: s3rver-main.mjs exits when it closes, i.e. when this process is gone.
  const child = spawn(process.execPath, [MAIN, directory], { stdio: ['pipe', 'pipe', 'pipe'] });
  // If the test run ends without stop() (a crash, mocha --exit), s3rver and its folder must not outlive it.
  const cleanUpOnExit = () => {
    child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  };
  process.once('exit', cleanUpOnExit);
  child.once('exit', () => process.off('exit', cleanUpOnExit));
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-2000);
  });
  let port: number;
  try {
    port = await waitForPort(child, () => log, options.timeoutMs ?? 30000);
  } catch (error) {
    await stopChild(child);
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const region = 'us-east-1';
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
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
    kind: 's3rver',
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
      await rm(directory, { recursive: true, force: true });
    },
  };
}
