// `gantry dev registry`: the embedded module registry alone, over a folder or an S3 bucket of your choice.
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../../errors.js';
import { examplesDir } from '../../../paths.js';
import { DEV_REGISTRY_PORT, devServerModules, registryClientEnv, type RegistryServerOptions } from '../../../../devserver/index.js';
import { exportLine } from '../../shell-quote.js';
import { checkPortFlag, checkWholeNumberFlag, devHostOf, listenAsAsked, serveAlone } from '../../serving.js';
import type { CliContext } from '../../context.js';

interface DevRegistryFlags {
  dir?: string;
  s3?: string;
  s3Endpoint?: string;
  s3Region?: string;
  s3Locations: string;
  port: string;
  host?: string;
  latency: string;
  tlsCert?: string;
  tlsKey?: string;
  checksums: boolean;
  fault: string[];
}

export function registerDevRegistry(dev: Command, context: CliContext): void {
  dev
    .command('registry')
    .description('serve modules.v1 from a folder (<namespace>/<name>/<provider>/<version>/ or <version>.tar.gz) or an S3 bucket')
    .option('--dir <folder>', 'module folder (default: the example modules)')
    .option('--s3 <s3://bucket/prefix>', 'serve <prefix>/<namespace>/<name>/<provider>/<version>.tar.gz objects; downloads are presigned URLs')
    .option('--s3-endpoint <url>', 'endpoint of an S3-compatible store (path-style); credentials from the AWS default chain')
    .option('--s3-region <region>', 'bucket region (default AWS_REGION or us-east-1)')
    .option('--s3-locations <kind>', "'presigned' URLs or 's3' (s3:: addresses the client fetches itself)", 'presigned')
    .option('--port <port>', 'port to listen on (0 = any free port)', String(DEV_REGISTRY_PORT))
    .option('--host <address>', 'the loopback address to listen on (127.0.0.1, ::1, localhost; default 127.0.0.1)')
    .option('--latency <ms>', 'answer no request sooner than this many milliseconds', '0')
    .option('--tls-cert <file>', 'serve https with this PEM certificate (needs --tls-key)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--checksums', 'add ?checksum=sha256:... to archive locations', false)
    .option(
      '--fault <json>',
      'arm a fault at start (repeatable), e.g. \'{"path":"/v1/modules/*/*/*/versions","kind":"status","status":429,"retryAfter":1,"times":2}\'',
      (value: string, all: string[]) => [...all, value],
      [] as string[],
    )
    .addHelpText(
      'after',
      '\nSet GANTRY_DEV_REGISTRY_TOKEN to require "Authorization: Bearer <token>" on the API.\nAddress modules as <host>:<port>/<namespace>/<name>/<provider>, e.g. 127.0.0.1:5758/gantry/network/aws.\nChange faults while it runs: POST/PUT/DELETE <url>/_gantry/faults (see docs/modules.md).',
    )
    .action(async (flags: DevRegistryFlags, command: Command) => {
      const { checkFault, parseS3Url, startRegistryServer } = await devServerModules.registry();
      const { json } = context.globals(command);
      const host = devHostOf(command);
      if (flags.dir && flags.s3) throw new UsageError('choose --dir or --s3, not both');
      if (!flags.tlsCert !== !flags.tlsKey) throw new UsageError('--tls-cert and --tls-key go together');
      if (flags.s3Locations !== 'presigned' && flags.s3Locations !== 's3')
        throw new UsageError(`--s3-locations must be presigned or s3, got "${flags.s3Locations}"`);
      const faults = flags.fault.map((text) => {
        try {
          return checkFault(JSON.parse(text));
        } catch (error) {
          throw new UsageError(`--fault ${text}: ${(error as Error).message}`);
        }
      });
      const options: RegistryServerOptions = {
        faults,
        host,
        port: checkPortFlag(flags.port),
        latencyMs: checkWholeNumberFlag(flags.latency, '--latency', 600_000),
        checksums: flags.checksums,
        log: (line) => context.logger.info(line),
      };
      if (flags.s3) {
        options.s3 = { ...parseS3Url(flags.s3), locations: flags.s3Locations };
        if (flags.s3Endpoint) options.s3.endpoint = flags.s3Endpoint;
        if (flags.s3Region) options.s3.region = flags.s3Region;
      } else {
        options.dir = path.resolve(flags.dir ?? path.join(examplesDir(), 'modules'));
      }
      if (flags.tlsCert && flags.tlsKey) {
        // Regular PEM files of a few MB: a device, a FIFO or a folder is exit 2 naming the flag, never read without end.
        const { readLocalFile } = await import('../../../local-paths.js');
        options.tls = {
          cert: await readLocalFile(flags.tlsCert, { what: 'the --tls-cert file', hint: '--tls-cert names a PEM file' }),
          key: await readLocalFile(flags.tlsKey, { what: 'the --tls-key file', hint: '--tls-key names a PEM file' }),
        };
      }
      const token = process.env.GANTRY_DEV_REGISTRY_TOKEN;
      if (token) options.token = token;

      const server = await listenAsAsked({ host, port: options.port ?? 0, portFlag: '--port' }, () => startRegistryServer(options));
      await serveAlone(context.out, json, server, {
        json: () => ({ host: server.host, source: server.source, env: registryClientEnv(server.host, token) }),
        text() {
          context.out.line(`module registry on ${server.url} serving ${server.source}`);
          context.out.line(`discovery: ${server.url}/.well-known/terraform.json`);
          context.out.line(`address modules as ${server.host}/<namespace>/<name>/<provider>${token ? ' (token required)' : ''}`);
          context.out.line();
          context.out.line(exportLine(registryClientEnv(server.host, token)));
          context.out.line();
        },
      });
    });
}
