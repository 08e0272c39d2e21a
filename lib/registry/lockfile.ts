import { expectObject, expectString } from '../arguments.js';
import { writeFileAtomic } from '../atomic-write.js';
import { GantryError, ExitCode } from '../errors.js';
import { parseEditedJson } from '../json-syntax.js';
import { checkWritableFile, readLocalText, writeFailure } from '../local-paths.js';
import { moduleAddressKey, parseModuleAddress } from './address.js';
import { parseConstraints, parseVersion } from './constraints.js';
import type { RegistryErrorCode } from './errors.js';

/** The lock file Gantry writes next to the manifest. */
export const lockFileName = 'gantry.lock.json';
export const lockFileVersion = 1;

export interface LockEntry {
  /** The constraint the version was chosen under, as written in the manifest. */
  constraint: string;
  version: string;
  /** The normalised location (credentials and signing parameters removed). */
  location: string;
  /** `h1:` content hash of the installed package. */
  hash: string;
}

export interface LockFile {
  version: typeof lockFileVersion;
  /** Keyed by normalised source address (host always written). */
  modules: Record<string, LockEntry>;
}

export class LockFileError extends GantryError {
  constructor(message: string, hint?: string) {
    super(message, {
      code: 'LOCK_FILE_INVALID' satisfies RegistryErrorCode,
      exitCode: ExitCode.usage,
      hint: hint ?? 'the lock file is never rewritten silently: fix it, restore it from version control, or delete it and run `gantry modules pin`',
    });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses and validates lock file text; any defect is a LockFileError naming the file and the entry. */
export function parseLockFile(text: string, file = lockFileName): LockFile {
  if (typeof file !== 'string') file = lockFileName;
  if (typeof text !== 'string') expectString('parseLockFile', 'text', text, 'the JSON text of a lock file');
  const data = parseEditedJson(text, {
    invalid: (error) => new LockFileError(`${file} is not valid JSON (${error.message}); it may be truncated or have a merge conflict`),
    duplicate: (duplicate) =>
      new LockFileError(
        `${file}: line ${duplicate.line}: the key ${JSON.stringify(duplicate.key)} appears again in the same object (first on line ${duplicate.firstLine}); JSON would keep only the last one — a merge may have left both`,
      ),
  });
  if (!isObject(data)) throw new LockFileError(`${file} is not a JSON object`);
  if (!('version' in data))
    throw new LockFileError(`${file} has no "version" field; a Gantry lock file starts with "version": ${lockFileVersion} and has a "modules" object`);
  if (data.version !== lockFileVersion)
    throw new LockFileError(`${file} has "version": ${JSON.stringify(data.version)}; this Gantry reads version ${lockFileVersion}`);
  if (!isObject(data.modules)) throw new LockFileError(`${file} has no "modules" object`);
  const modules: Record<string, LockEntry> = {};
  const written = new Map<string, string>();
  for (const [source, entry] of Object.entries(data.modules)) {
    const where = `${file}: the entry "${source}"`;
    if (!isObject(entry)) throw new LockFileError(`${where} is not an object`);
    for (const field of ['constraint', 'version', 'location', 'hash'] as const) {
      if (!(field in entry)) throw new LockFileError(`${where} has no "${field}" field`);
      if (typeof entry[field] !== 'string') throw new LockFileError(`${where} has a "${field}" that is not a string (${JSON.stringify(entry[field])})`);
    }
    let key: string;
    try {
      key = moduleAddressKey(parseModuleAddress(source, {}));
    } catch (error) {
      throw new LockFileError(`${where} is not a module address: ${(error as Error).message}`);
    }
    const earlier = written.get(key);
    if (earlier !== undefined) {
      throw new LockFileError(
        `${file}: the entries "${earlier}" and "${source}" are the same module ${key} (host, namespace and name are compared without regard to case); a lock pins one version per address`,
      );
    }
    written.set(key, source);
    if (parseVersion(entry.version as string) === undefined)
      throw new LockFileError(`${where} has "version": ${JSON.stringify(entry.version)}, which is not a version`);
    try {
      parseConstraints(entry.constraint as string);
    } catch (error) {
      throw new LockFileError(`${where} has an invalid "constraint": ${(error as Error).message}`);
    }
    if ((entry.location as string).trim() === '') throw new LockFileError(`${where} has an empty "location"`);
    if (!/^h1:[A-Za-z0-9+/]{43}=$/.test(entry.hash as string))
      throw new LockFileError(`${where} has a malformed hash ${JSON.stringify(entry.hash)} (expected h1: and 44 base64 characters)`);
    modules[key] = { constraint: entry.constraint as string, version: entry.version as string, location: entry.location as string, hash: entry.hash as string };
  }
  return { version: lockFileVersion, modules };
}

/** Reads a lock file; a missing file is an empty lock, anything unreadable is an error. */
export async function readLockFile(file: string): Promise<LockFile> {
  expectString('readLockFile', 'file', file, `the path of a lock file such as ${lockFileName}`);
  // Opened once and looked at: a folder, a device (a link to /dev/full), a FIFO or more than a few MB is a usage error
  // naming the file, never a read without end or a wait for a writer.
  const text = await readLocalText(file, {
    what: 'the lock file',
    missingOk: true,
    hint: 'give the path of a lock file (a regular file next to the manifest)',
  });
  if (text === undefined) return { version: lockFileVersion, modules: {} };
  return parseLockFile(text, file);
}

/** The lock as text: sources sorted, fields in a fixed order, two-space indent, trailing newline. */
export function formatLockFile(lock: LockFile): string {
  return formatChecked('formatLockFile', lock);
}

/** The lock as text, its arguments checked in the name of `where`, the public function the caller called. */
function formatChecked(where: string, lock: LockFile): string {
  expectObject(where, 'lock', lock, 'a lock file (readLockFile, parseLockFile or pin)');
  expectObject(where, 'lock.modules', lock.modules, 'an object of lock entries');
  const modules: Record<string, LockEntry> = {};
  for (const source of Object.keys(lock.modules).sort()) {
    const entry = lock.modules[source] as LockEntry;
    modules[source] = { constraint: entry.constraint, version: entry.version, location: entry.location, hash: entry.hash };
  }
  return `${JSON.stringify({ version: lockFileVersion, modules }, null, 2)}\n`;
}

/** Writes the lock file atomically: a temporary file in the same folder, then a rename. */
export async function writeLockFile(file: string, lock: LockFile): Promise<void> {
  expectString('writeLockFile', 'file', file, `the path of a lock file such as ${lockFileName}`);
  const text = formatChecked('writeLockFile', lock); // checks the lock before anything is written
  await checkWritableFile(file, 'the lock file');
  await writeFileAtomic(file, text).catch((error: unknown) => {
    throw writeFailure(error, file, 'the lock file');
  });
}
