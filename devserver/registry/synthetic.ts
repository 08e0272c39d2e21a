// Writes N small, valid modules into a folder the registry can serve — for benchmarks (bench/pin) and load tests.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface SyntheticModulesOptions {
  /** How many modules (distinct namespace/name/provider). */
  count: number;
  /** Versions per module, newest last: 1.0.0, 1.1.0, ... Default 3. */
  versionsPerModule?: number;
  namespace?: string;
  provider?: string;
  /** Module names are `${prefix}-${index}` with the index zero-padded. Default 'mod'. */
  prefix?: string;
}

/** Returns the source-address tails (`<namespace>/<name>/<provider>`) written, in order. */
export async function writeSyntheticModules(dir: string, options: SyntheticModulesOptions): Promise<string[]> {
  const { count, versionsPerModule = 3, namespace = 'bench', provider = 'null', prefix = 'mod' } = options;
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
  if (!Number.isSafeInteger(versionsPerModule) || versionsPerModule < 1) throw new RangeError('versionsPerModule must be a positive integer');
  const width = String(count - 1).length;
  const written: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}-${String(i).padStart(width, '0')}`;
    const moduleDir = path.join(dir, namespace, name, provider);
    for (let v = 0; v < versionsPerModule; v++) {
      const versionDir = path.join(moduleDir, `1.${v}.0`);
      await mkdir(versionDir, { recursive: true });
      await writeFile(
        path.join(versionDir, 'main.tf'),
        `variable "name" {\n  description = "Name of ${name}"\n  default     = "${name}"\n}\n\noutput "id" {\n  description = "Identifier"\n  value       = "${name}-1.${v}.0-\${var.name}"\n}\n`,
      );
      await writeFile(path.join(versionDir, 'README.md'), `# ${name}\n\nSynthetic module ${i} of ${count}, version 1.${v}.0.\n`);
    }
    await writeFile(path.join(moduleDir, 'module.json'), JSON.stringify({ description: `Synthetic module ${i}`, owner: namespace }, null, 2) + '\n');
    written.push(`${namespace}/${name}/${provider}`);
  }
  return written;
}
