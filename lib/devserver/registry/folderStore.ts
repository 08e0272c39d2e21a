// Modules from a folder laid out <namespace>/<name>/<provider>/<version>/ (archived on request)
// or <namespace>/<name>/<provider>/<version>.tar.gz|.zip|... (served as they are), with an optional
// module.json next to the versions.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  archiveExtension,
  buildModule,
  CatalogError,
  NAME_PATTERN,
  parseModuleMetadata,
  PROVIDER_PATTERN,
  VERSION_NAME_PATTERN,
  type ModuleEntry,
  type VersionEntry,
} from './catalog.js';

export interface ModuleStore {
  /** For messages: where the modules come from. */
  readonly description: string;
  load(warn: (message: string) => void): Promise<ModuleEntry[]>;
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
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

    const modules: ModuleEntry[] = [];
    for (const namespace of await subdirectories(this.root)) {
      if (!NAME_PATTERN.test(namespace)) {
        warn(`skipping ${path.join(this.root, namespace)}: "${namespace}" is not a valid namespace`);
        continue;
      }
      for (const name of await subdirectories(path.join(this.root, namespace))) {
        if (!NAME_PATTERN.test(name)) {
          warn(`skipping ${path.join(this.root, namespace, name)}: "${name}" is not a valid module name`);
          continue;
        }
        for (const provider of await subdirectories(path.join(this.root, namespace, name))) {
          if (!PROVIDER_PATTERN.test(provider)) {
            warn(`skipping ${path.join(this.root, namespace, name, provider)}: provider must be 1-64 lowercase letters and digits`);
            continue;
          }
          const module = await this.loadModule(namespace, name, provider, warn);
          if (module.versions.length > 0) modules.push(module);
        }
      }
    }
    return modules;
  }

  private async loadModule(namespace: string, name: string, provider: string, warn: (m: string) => void): Promise<ModuleEntry> {
    const dir = path.join(this.root, namespace, name, provider);
    const found = new Map<string, VersionEntry>();
    let metadataText: string | undefined;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.name === 'module.json' && entry.isFile()) {
        metadataText = await readFile(full, 'utf8');
        continue;
      }
      const extension = entry.isFile() ? archiveExtension(entry.name) : undefined;
      const version = entry.isDirectory() ? entry.name : extension ? entry.name.slice(0, -extension.length) : undefined;
      if (version === undefined) {
        warn(`skipping ${full}: neither a version folder nor an archive (${'.tar.gz, .tgz, .zip, ...'})`);
        continue;
      }
      if (!VERSION_NAME_PATTERN.test(version)) {
        warn(`skipping ${full}: "${version}" is not a usable version name`);
        continue;
      }
      const publishedAt = (await stat(full)).mtime.toISOString();
      // A ready archive wins over a folder of the same version: it is what the author chose to publish.
      if (extension) found.set(version, { version, publishedAt, artifact: { kind: 'file', path: full, extension } });
      else if (!found.has(version)) found.set(version, { version, publishedAt, artifact: { kind: 'directory', path: full } });
    }
    const metadata = metadataText === undefined ? {} : parseModuleMetadata(metadataText, path.join(dir, 'module.json'));
    return buildModule({ namespace, name, provider }, [...found.values()], metadata);
  }
}
