import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startRegistryServer, type RegistryServer, type RegistryServerOptions } from '../../devserver/registry/index.js';
import { definePolicy } from '../../lib/http/index.js';
import { registryRetryPolicy } from '../../lib/registry/retry.js';

export interface ModuleSpec {
  namespace: string;
  name: string;
  provider: string;
  versions: string[];
  verified?: boolean;
  description?: string;
  /** Extra files per version (path → content); main.tf is always written. */
  files?: Record<string, string>;
}

/** Writes modules in the embedded registry's folder layout: <namespace>/<name>/<provider>/<version>/. */
export async function writeModules(root: string, modules: ModuleSpec[]): Promise<void> {
  for (const module of modules) {
    const base = join(root, module.namespace, module.name, module.provider);
    for (const version of module.versions) {
      const dir = join(base, version);
      await mkdir(dir, { recursive: true });
      await writeFile(
        join(dir, 'main.tf'),
        `# ${module.namespace}/${module.name}/${module.provider} ${version}\nvariable "name" {\n  description = "A name"\n  default     = "x"\n}\n`,
      );
      for (const [path, content] of Object.entries(module.files ?? {})) {
        await mkdir(join(dir, path, '..'), { recursive: true });
        await writeFile(join(dir, path), content);
      }
    }
    await writeFile(
      join(base, 'module.json'),
      JSON.stringify({
        owner: module.namespace,
        description: module.description ?? `${module.name} for ${module.provider}`,
        source: `https://example.com/${module.namespace}/${module.name}`,
        verified: module.verified ?? false,
        downloads: 3,
      }),
    );
  }
}

export async function startRegistry(root: string, options: Omit<RegistryServerOptions, 'dir'> = {}): Promise<RegistryServer> {
  return startRegistryServer({ dir: root, rescanMs: 0, ...options });
}

/** The registry policy with short waits, so retry tests take milliseconds; the statuses retried are unchanged. */
export const fastRegistryPolicy = definePolicy(
  {
    backoff: { initialMs: 5, maxMs: 20, factor: 2, jitter: 0 },
    statusBackoff: { 503: { initialMs: 40, factor: 2, maxMs: 200 } },
    budgetMs: 10_000,
  },
  registryRetryPolicy,
);
