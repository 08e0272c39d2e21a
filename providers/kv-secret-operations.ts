// The implementation behind `kvSecretOperations` (./kv-secret.ts), never serialized: the dynamic-provider plugin loads it
// through `gantry/providers` when the engine calls a method.
import type * as pulumi from '@pulumi/pulumi';
import { GantryError } from '../lib/errors.js';
import {
  SecretsClient,
  SecretsError,
  checkNoBinary,
  encodePath,
  normaliseMount,
  normaliseNamespace,
  rehinted,
  serializeWithinLimits,
  type KvMetadata,
  type ResolveSources,
  type SecretData,
} from '../lib/secrets/index.js';
import { changedInputs, defined, pickInputs, sameValue } from './inputs.js';
import type { Operations } from './serialized.js';
import { kvSecretProvider, inputKeys, type KvSecretInputs, type KvSecretOutputs, type KvSecretSettings } from './kv-secret.js';

/** A client for one operation, closed after it; the address and token are read here, in the plugin. */
async function withSecrets<T>(settings: KvSecretSettings | undefined, work: (client: SecretsClient) => Promise<T>): Promise<T> {
  const sources: ResolveSources = { env: process.env, pulumi: (key) => settings?.[key] };
  const client = new SecretsClient({ sources });
  try {
    return await work(client);
  } finally {
    client.close();
  }
}

async function engineFor(client: SecretsClient, inputs: KvSecretInputs) {
  return client.kv(inputs.mount, {
    ...(inputs.kvVersion ? { kvVersion: inputs.kvVersion } : {}),
    ...(inputs.namespace ? { namespace: inputs.namespace } : {}),
  });
}

async function outputsOf(client: SecretsClient, inputs: KvSecretInputs, data: SecretData): Promise<KvSecretOutputs> {
  const kv = await engineFor(client, inputs);
  const kvVersion = await kv.version();
  let metadata: KvMetadata | undefined;
  if (kvVersion === 2) metadata = await kv.readMetadata(inputs.path);
  const current = metadata?.versions[String(metadata.currentVersion)];
  // Absent outputs (kv v1 has no versions) are left out.
  return defined({
    ...inputs,
    data,
    kvVersion,
    version: metadata?.currentVersion,
    createdTime: current?.createdTime,
    metadata: metadata ? summaryOf(metadata) : undefined,
  });
}

function summaryOf(metadata: KvMetadata): Omit<KvMetadata, 'versions'> {
  const { versions: _versions, ...summary } = metadata;
  return summary;
}

function idOf(inputs: Pick<KvSecretInputs, 'mount' | 'path'>): string {
  return `${inputs.mount}${inputs.path}`;
}

export const kvSecretOperations = {
  async check(_olds, news) {
    const given = pickInputs<KvSecretInputs>(news, inputKeys);
    const failures: pulumi.dynamic.CheckFailure[] = [];
    const attempt = <T>(property: string, f: () => T): T | undefined => {
      try {
        return f();
      } catch (error) {
        failures.push({ property, reason: error instanceof GantryError ? error.message : String(error) });
        return undefined;
      }
    };
    const mount =
      typeof given.mount === 'string'
        ? attempt('mount', () => normaliseMount(given.mount))
        : (failures.push({ property: 'mount', reason: 'mount must be a string such as "secret"' }), undefined);
    const path = typeof given.path === 'string' ? given.path.replace(/^\//, '') : undefined;
    if (path === undefined) failures.push({ property: 'path', reason: 'path must be a string such as "app/db"' });
    else attempt('path', () => encodePath(path));
    const { data } = given;
    if (!data || typeof data !== 'object' || Array.isArray(data)) failures.push({ property: 'data', reason: 'data must be an object of keys and values' });
    // Only the shape is reported, never a value.
    else {
      attempt('data', () => {
        checkNoBinary(data);
        return serializeWithinLimits({ data });
      });
    }
    if (given.kvVersion !== undefined && given.kvVersion !== 1 && given.kvVersion !== 2)
      failures.push({ property: 'kvVersion', reason: 'kvVersion must be 1 or 2 (or absent: detected from the mount)' });
    for (const flag of ['cas', 'deleteAllVersions'] as const) {
      if (given[flag] !== undefined && typeof given[flag] !== 'boolean') failures.push({ property: flag, reason: `${flag} must be true or false` });
    }
    const custom = given.customMetadata;
    if (custom !== undefined) {
      if (!custom || typeof custom !== 'object' || Array.isArray(custom))
        failures.push({ property: 'customMetadata', reason: 'customMetadata must be an object of strings' });
      else {
        const entries = Object.entries(custom);
        if (entries.length > 64) failures.push({ property: 'customMetadata', reason: `customMetadata has ${entries.length} keys; at most 64` });
        for (const [k, v] of entries) {
          if (typeof v !== 'string') failures.push({ property: 'customMetadata', reason: `customMetadata.${k} must be a string` });
          else if (Buffer.byteLength(k) > 128 || k === '')
            failures.push({ property: 'customMetadata', reason: `customMetadata key "${k.slice(0, 40)}" must be 1 to 128 bytes` });
          else if (Buffer.byteLength(v) > 512) failures.push({ property: 'customMetadata', reason: `customMetadata.${k} is over 512 bytes` });
        }
        if (given.kvVersion === 1) failures.push({ property: 'customMetadata', reason: 'kv v1 keeps no metadata' });
      }
    }
    // No namespace (undefined or null) is the provider's; one that does not normalise is left out with its failure.
    const { namespace: givenNamespace, ...rest } = given;
    let namespace: string | undefined;
    if (givenNamespace !== undefined && givenNamespace !== null) {
      if (typeof givenNamespace !== 'string') failures.push({ property: 'namespace', reason: 'namespace must be a string' });
      else namespace = attempt('namespace', () => normaliseNamespace(givenNamespace));
    }
    const inputs: KvSecretInputs = {
      ...rest,
      mount: mount ?? String(given.mount),
      path: path ?? String(given.path),
      data: data ?? {},
      ...(namespace !== undefined ? { namespace } : {}),
    };
    return { inputs, failures };
  },

  async diff(settings, _id, olds, news) {
    const replaces: string[] = changedInputs(olds, news, ['mount', 'path', 'namespace'], { namespace: '' });
    if (news.kvVersion !== undefined && olds.kvVersion !== news.kvVersion) replaces.push('kvVersion');
    const changed = new Set<string>([
      ...replaces,
      ...changedInputs(olds, news, ['data', 'customMetadata', 'cas', 'deleteAllVersions'], { cas: false, deleteAllVersions: false }),
    ]);
    if (replaces.length === 0 && !changed.has('data')) {
      // The state may be stale: a secret changed or deleted outside Pulumi is put back on this update, without a
      // refresh (the Terraform vault provider's open complaints #2534 and #1131). Only "changed" is reported.
      const live = await withSecrets(settings, async (client) => (await engineFor(client, { ...news, kvVersion: olds.kvVersion })).read(news.path));
      if (live.state !== 'current' || !sameValue(live.data, news.data)) changed.add('data');
    }
    return { changes: changed.size > 0, replaces, deleteBeforeReplace: false, ...(replaces.length === 0 ? { stables: ['kvVersion'] } : {}) };
  },

  async create(settings, inputs) {
    return withSecrets(settings, async (client) => {
      const kv = await engineFor(client, inputs);
      const kvVersion = await kv.version();
      if (kvVersion === 2 && inputs.customMetadata) await kv.writeMetadata(inputs.path, { customMetadata: inputs.customMetadata });
      await kv.write(inputs.path, inputs.data, inputs.cas && kvVersion === 2 ? { cas: 0 } : {});
      return { id: idOf(inputs), outs: await outputsOf(client, { ...inputs, kvVersion }, inputs.data) };
    });
  },

  async read(settings, id, props?) {
    return withSecrets(settings, async (client): Promise<pulumi.dynamic.ReadResult<KvSecretOutputs>> => {
      let inputs: KvSecretInputs;
      // The engine imports with no properties (or an empty bag): only the id is known.
      const importing = !props || typeof props.mount !== 'string' || typeof props.path !== 'string';
      if (!importing) {
        inputs = props;
      } else {
        // Import: the id is `<mount>/<path>`; the service says where the mount ends.
        const { kv, name } = await client.kvAt(id);
        inputs = { mount: kv.mount, path: name, data: {}, kvVersion: await kv.version() };
      }
      const kv = await engineFor(client, inputs);
      const live = await kv.read(inputs.path);
      // Deleted, destroyed or missing: gone for the engine, so the next update creates it again.
      if (live.state !== 'current') return { id: '' };
      const outs = await outputsOf(client, inputs, live.data);
      // Custom metadata is reported when imported, or when the resource manages it (so a change by hand is drift).
      const custom = outs.metadata?.customMetadata;
      if (importing ? custom : props?.customMetadata !== undefined) outs.customMetadata = custom ?? {};
      return { id: idOf(inputs), props: outs };
    });
  },

  async update(settings, _id, olds, news) {
    return withSecrets(settings, async (client) => {
      const kv = await engineFor(client, { ...news, kvVersion: news.kvVersion ?? olds.kvVersion });
      const kvVersion = await kv.version();
      if (kvVersion === 2 && !sameValue(olds.customMetadata, news.customMetadata)) {
        await kv.writeMetadata(news.path, { customMetadata: news.customMetadata ?? {} });
      }
      let cas: number | undefined;
      if (news.cas && kvVersion === 2) {
        // Check-and-set against the version this stack last saw; a key removed entirely starts again at 0.
        const metadata = await kv.readMetadata(news.path);
        cas = metadata ? (olds.version ?? 0) : 0;
      }
      try {
        await kv.write(news.path, news.data, cas !== undefined ? { cas } : {});
      } catch (error) {
        if (cas !== undefined && error instanceof SecretsError && error.code === 'SECRETS_CAS_MISMATCH') {
          throw rehinted(error, {
            code: 'SECRETS_CAS_MISMATCH',
            hint: `${news.mount}${news.path} changed outside this stack since version ${cas}: run \`pulumi refresh\` to take the change in, then \`pulumi up\`.`,
          });
        }
        throw error;
      }
      return { outs: await outputsOf(client, { ...news, kvVersion }, news.data) };
    });
  },

  async delete(settings, _id, props) {
    await withSecrets(settings, async (client) => {
      const kv = await engineFor(client, props);
      if ((await kv.version()) === 2 && props.deleteAllVersions) await kv.deleteMetadata(props.path);
      else await kv.delete(props.path);
    });
  },
} satisfies Operations<typeof kvSecretProvider, KvSecretInputs, KvSecretOutputs>;
