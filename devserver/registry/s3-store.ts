// Modules from an S3 bucket: <prefix>/<namespace>/<name>/<provider>/<version>.tar.gz|.zip|... and an optional
// <prefix>/<namespace>/<name>/<provider>/module.json. Downloads point at presigned GET URLs (or s3:: addresses).
import { GetObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { addressProblem, archiveExtension, CatalogError, moduleFrom, VERSION_NAME_PATTERN, type ModuleEntry, type VersionEntry } from './catalog.js';
import type { ModuleStore } from './folder-store.js';
import type { S3StoreOptions } from './s3-options.js';

export class S3Store implements ModuleStore {
  readonly description: string;
  readonly client: S3Client;
  private readonly prefix: string;

  constructor(private readonly options: S3StoreOptions) {
    this.prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.description = `s3://${options.bucket}${this.prefix ? '/' + this.prefix : ''}`;
    const config: S3ClientConfig = {
      region: options.region ?? process.env.AWS_REGION ?? 'us-east-1',
      forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
      // S3-compatible stores (s3rver, some MinIO setups) mishandle the SDK's default aws-chunked checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.credentials) config.credentials = options.credentials;
    this.client = new S3Client(config);
  }

  async load(warn: (message: string) => void): Promise<ModuleEntry[]> {
    const base = this.prefix ? this.prefix + '/' : '';
    const versions = new Map<string, { key: [string, string, string]; found: VersionEntry[]; metadataKey?: string }>();
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: base, ContinuationToken: token }));
      } catch (error) {
        throw new CatalogError(`cannot list ${this.description}: ${(error as Error).name}: ${(error as Error).message}`);
      }
      for (const object of page.Contents ?? []) {
        const key = object.Key ?? '';
        const parts = key.slice(base.length).split('/');
        if (parts.length !== 4) continue;
        const [namespace, name, provider, file] = parts as [string, string, string, string];
        if (addressProblem('namespace', namespace) || addressProblem('name', name) || addressProblem('provider', provider)) {
          warn(`skipping s3://${this.options.bucket}/${key}: not <namespace>/<name>/<provider>/<file> with valid names`);
          continue;
        }
        const id = `${namespace}/${name}/${provider}`;
        const slot = versions.get(id) ?? { key: [namespace, name, provider] as [string, string, string], found: [] };
        versions.set(id, slot);
        if (file === 'module.json') {
          slot.metadataKey = key;
          continue;
        }
        const extension = archiveExtension(file);
        const version = extension ? file.slice(0, -extension.length) : undefined;
        if (!extension || !version || !VERSION_NAME_PATTERN.test(version)) {
          warn(`skipping s3://${this.options.bucket}/${key}: not <version>.<archive extension>`);
          continue;
        }
        slot.found.push({
          version,
          publishedAt: (object.LastModified ?? new Date(0)).toISOString(),
          artifact: { kind: 's3', bucket: this.options.bucket, key, extension, modifiedMs: (object.LastModified ?? new Date(0)).getTime() },
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);

    const modules: ModuleEntry[] = [];
    for (const slot of versions.values()) {
      const [namespace, name, provider] = slot.key;
      let moduleJson: { text: string; where: string } | undefined;
      if (slot.metadataKey) {
        const object = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: slot.metadataKey }));
        moduleJson = { text: (await object.Body?.transformToString('utf8')) ?? '', where: `s3://${this.options.bucket}/${slot.metadataKey}` };
      }
      const module = moduleFrom({ namespace, name, provider }, slot.found, moduleJson);
      if (module.versions.length > 0) modules.push(module);
    }
    return modules;
  }

  /** Streams an object of this store (to describe a module version's content). */
  async open(bucket: string, key: string): Promise<NodeJS.ReadableStream> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!object.Body) throw new CatalogError(`s3://${bucket}/${key} has no body`);
    return object.Body as NodeJS.ReadableStream;
  }

  /** The X-Registry-Get value for an object of this store. */
  async location(bucket: string, key: string): Promise<string> {
    if (this.options.locations === 's3') {
      if (this.options.endpoint) {
        const endpoint = this.options.endpoint.replace(/\/+$/, '');
        return `s3::${endpoint}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
      }
      const region = await this.client.config.region();
      return `s3::https://s3-${region}.amazonaws.com/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
    }
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: this.options.expiresInSeconds ?? 900,
    });
  }

  stop(): void {
    this.client.destroy();
  }
}
