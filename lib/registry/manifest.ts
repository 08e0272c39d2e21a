import { expectString } from '../arguments.js';
import { UsageError } from '../errors.js';
import { readLocalText } from '../local-paths.js';
import { parseEditedJson } from '../json-syntax.js';
import { moduleAddressKey, parseModuleAddress, type ModuleAddress } from './address.js';
import { parseConstraints, type ConstraintSet } from './constraints.js';
import type { RegistryErrorCode } from './errors.js';

/** The manifest the user writes: local name → `{ source, version }`. */
export const manifestFileName = 'gantry.modules.json';

export interface ManifestModule {
  /** The local name; also the folder under the install directory. */
  name: string;
  source: string;
  address: ModuleAddress;
  /** Normalised source address, namespace and name in lower case: the lock file key. */
  key: string;
  constraint: ConstraintSet;
}

const localNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates a manifest document; errors name the file and the module. */
export function parseManifest(text: string, file = manifestFileName, env: NodeJS.ProcessEnv = process.env): ManifestModule[] {
  if (typeof file !== 'string') file = manifestFileName;
  if (typeof text !== 'string') expectString('parseManifest', 'text', text, 'the JSON text of a manifest');
  const data = parseEditedJson(text, {
    invalid: (error) => new UsageError(`${file} is not valid JSON: ${error.message}`, { code: 'MANIFEST_INVALID' satisfies RegistryErrorCode }),
    duplicate: (duplicate) =>
      new UsageError(
        `${file}: line ${duplicate.line}: the key ${JSON.stringify(duplicate.key)} appears again in the same object (first on line ${duplicate.firstLine}); JSON would keep only the last one`,
        { code: 'MANIFEST_INVALID' satisfies RegistryErrorCode, hint: 'give each module its own local name, or remove one of the two entries' },
      ),
  });
  if (!isObject(data))
    throw new UsageError(`${file} must be a JSON object mapping local names to { "source", "version" }`, {
      code: 'MANIFEST_INVALID' satisfies RegistryErrorCode,
    });
  const modules: ManifestModule[] = [];
  const byKey = new Map<string, ManifestModule>();
  for (const [name, entry] of Object.entries(data)) {
    if (!localNamePattern.test(name) || name.endsWith('.')) {
      throw new UsageError(`${file}: the local name "${name}" must be 1-64 letters, digits, ".", "-" or "_", starting with a letter or digit`, {
        code: 'MANIFEST_INVALID' satisfies RegistryErrorCode,
      });
    }
    if (!isObject(entry) || typeof entry.source !== 'string')
      throw new UsageError(`${file}: "${name}" needs a "source" string`, { code: 'MANIFEST_INVALID' satisfies RegistryErrorCode });
    if (entry.version !== undefined && typeof entry.version !== 'string')
      throw new UsageError(`${file}: the "version" of "${name}" must be a string`, { code: 'MANIFEST_INVALID' satisfies RegistryErrorCode });
    let address: ModuleAddress;
    let constraint: ConstraintSet;
    try {
      address = parseModuleAddress(entry.source, env);
      constraint = parseConstraints(entry.version as string | undefined);
    } catch (error) {
      throw new UsageError(`${file}: module "${name}": ${(error as Error).message}`, {
        code: 'MANIFEST_INVALID' satisfies RegistryErrorCode,
        hint: (error as UsageError).hint,
      });
    }
    const key = moduleAddressKey(address);
    const module = { name, source: entry.source, address, key, constraint };
    const same = byKey.get(key);
    if (same && same.constraint.text !== constraint.text) {
      throw new UsageError(
        `${file}: "${same.name}" (${same.source}) and "${name}" (${entry.source}) are the same module ${key} with different constraints ("${same.constraint.text}" and "${constraint.text}")`,
        {
          code: 'MANIFEST_INVALID' satisfies RegistryErrorCode,
          hint: 'the lock file pins one version per source address (host, namespace and name compared without regard to case); give both the same constraint',
        },
      );
    }
    byKey.set(key, module);
    modules.push(module);
  }
  return modules;
}

export async function readManifest(file: string, env?: NodeJS.ProcessEnv): Promise<ManifestModule[]> {
  expectString('readManifest', 'file', file, `the path of a manifest such as ${manifestFileName}`);
  // A folder, a device, a FIFO or more than a few MB is refused naming the file, never read without end.
  const text = await readLocalText(file, { what: 'the manifest', missingOk: true, hint: `give the path of a manifest file such as ${manifestFileName}` });
  if (text === undefined)
    throw new UsageError(`${file} does not exist`, {
      code: 'MANIFEST_MISSING' satisfies RegistryErrorCode,
      hint: `write ${manifestFileName} mapping local names to { "source": "namespace/name/provider", "version": "~> 1.0" }`,
    });
  return parseManifest(text, file, env);
}
