// Modules from a folder laid out <namespace>/<name>/<provider>/<version>/ (archived on request)
// or <namespace>/<name>/<provider>/<version>.tar.gz|.zip|... (served as they are), with an optional
// module.json next to the versions.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { addressProblem, archiveExtension, CatalogError, moduleFrom, VERSION_NAME_PATTERN, type ModuleEntry, type VersionEntry } from './catalog.js';

export interface ModuleStore {
  /** For messages: where the modules come from. */
  readonly description: string;
  load(warn: (message: string) => void): Promise<ModuleEntry[]>;
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

export class FolderStore implements ModuleStore {
  readonly description: string;
  constructor(readonly root: string) {
    this.root = path.resolve(root);
    this.description = `folder ${this.root}`;
  }

  async load(warn: (message: string) => void): Promise<ModuleEntry[]> {
    let info;
    try {
      info = await stat(this.root);
    } catch {
      throw new CatalogError(`module folder ${this.root} does not exist`);
    }
    if (!info.isDirectory()) throw new CatalogError(`module folder ${this.root} is not a directory`);

    const found: [string, string, string][] = [];
    for (const namespace of await subdirectories(this.root)) {
      const namespaceProblem = addressProblem('namespace', namespace);
      if (namespaceProblem) {
        warn(`skipping ${path.join(this.root, namespace)}: ${namespaceProblem}`);
        continue;
      }
      for (const name of await subdirectories(path.join(this.root, namespace))) {
        const nameProblem = addressProblem('name', name);
        if (nameProblem) {
          warn(`skipping ${path.join(this.root, namespace, name)}: ${nameProblem}`);
          continue;
        }
        for (const provider of await subdirectories(path.join(this.root, namespace, name))) {
          const providerProblem = addressProblem('provider', provider);
          if (providerProblem) {
            warn(`skipping ${path.join(this.root, namespace, name, provider)}: ${providerProblem}`);
            continue;
          }
          found.push([namespace, name, provider]);
        }
      }
    }
    // Modules are read a few at a time: a folder of hundreds of modules loads in tens of milliseconds.
    const modules: ModuleEntry[] = new Array(found.length);
    let next = 0;
    const worker = async () => {
      while (next < found.length) {
        const index = next++;
        const [namespace, name, provider] = found[index]!;
        modules[index] = await this.loadModule(namespace, name, provider, warn);
      }
    };
    await Promise.all(Array.from({ length: Math.min(16, found.length) }, worker));
    return modules.filter((m) => m.versions.length > 0);
  }

  private async loadModule(namespace: string, name: string, provider: string, warn: (m: string) => void): Promise<ModuleEntry> {
    const dir = path.join(this.root, namespace, name, provider);
    const found = new Map<string, VersionEntry>();
    let metadataFile: string | undefined;
    const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.name.startsWith('.'));
    const stamps = await Promise.all(entries.map((e) => stat(path.join(dir, e.name))));
    entries.forEach((entry, i) => {
      const full = path.join(dir, entry.name);
      if (entry.name === 'module.json' && entry.isFile()) {
        metadataFile = full;
        return;
      }
      const extension = entry.isFile() ? archiveExtension(entry.name) : undefined;
      const version = entry.isDirectory() ? entry.name : extension ? entry.name.slice(0, -extension.length) : undefined;
      if (version === undefined) {
        warn(`skipping ${full}: neither a version folder nor an archive (.tar.gz, .tgz, .zip, ...)`);
        return;
      }
      if (!VERSION_NAME_PATTERN.test(version)) {
        warn(`skipping ${full}: "${version}" is not a usable version name`);
        return;
      }
      const modified = stamps[i]!.mtime;
      const publishedAt = modified.toISOString();
      // A ready archive wins over a folder of the same version: it is what the author chose to publish.
      if (extension) found.set(version, { version, publishedAt, artifact: { kind: 'file', path: full, extension, modifiedMs: modified.getTime() } });
      else if (!found.has(version)) found.set(version, { version, publishedAt, artifact: { kind: 'directory', path: full, modifiedMs: modified.getTime() } });
    });
    const moduleJson = metadataFile === undefined ? undefined : { text: await readFile(metadataFile, 'utf8'), where: path.join(dir, 'module.json') };
    return moduleFrom({ namespace, name, provider }, [...found.values()], moduleJson);
  }
}
