/**
 * The record of what Gantry installed in an install folder: `<dir>/.gantry-installed.json`, mapping each local name
 * to the source, version and content hash written there. `install` replaces a folder only when the record says Gantry
 * wrote it and its content still hashes as written: a folder of the user's, or a module edited in place, is never
 * deleted without `force`.
 */
import { join } from 'node:path';
import { writeFileAtomic } from '../atomic-write.js';
import { UsageError } from '../errors.js';
import { localFileLimits, readLocalText } from '../local-paths.js';
import type { RegistryErrorCode } from './errors.js';

export const installedFileName = '.gantry-installed.json';

export interface InstalledEntry {
  source: string;
  version: string;
  hash: string;
}

export type InstalledRecord = Record<string, InstalledEntry>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads the record of `dir`; a missing one is empty. A damaged one is a usage error naming it. */
export async function readInstalled(dir: string): Promise<InstalledRecord> {
  const file = join(dir, installedFileName);
  const text = await readLocalText(file, { what: "Gantry's record of installed modules", missingOk: true, maxBytes: localFileLimits.data });
  if (text === undefined) return {};
  const hint = `the file is Gantry's record of what it installed; delete it to have every existing module folder treated as not Gantry's (then \`gantry modules install --force\` replaces them)`;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`, { code: 'INSTALLED_RECORD_INVALID' satisfies RegistryErrorCode, hint });
  }
  if (!isObject(data) || data.version !== 1 || !isObject(data.modules))
    throw new UsageError(`${file} is not a record Gantry wrote (version 1 with "modules")`, {
      code: 'INSTALLED_RECORD_INVALID' satisfies RegistryErrorCode,
      hint,
    });
  const record: InstalledRecord = {};
  for (const [name, entry] of Object.entries(data.modules)) {
    if (isObject(entry) && typeof entry.source === 'string' && typeof entry.version === 'string' && typeof entry.hash === 'string') {
      record[name] = { source: entry.source, version: entry.version, hash: entry.hash };
    }
  }
  return record;
}

/** Writes the record atomically (names sorted). */
export async function writeInstalled(dir: string, record: InstalledRecord): Promise<void> {
  const file = join(dir, installedFileName);
  const modules: InstalledRecord = {};
  for (const name of Object.keys(record).sort()) modules[name] = record[name] as InstalledEntry;
  await writeFileAtomic(file, `${JSON.stringify({ version: 1, modules }, null, 2)}\n`);
}
