// Secret values the way the Pulumi engine moves them: on the wire a secret is an object carrying the
// signature key; in the state file its value is replaced by ciphertext. The dynamic-provider plugin
// answers Configure with acceptSecrets=false, so the engine (and this harness) strips the wrappers
// before calling it and marks the outputs again afterwards.
import { createCipheriv, randomBytes } from 'node:crypto';

export const SIG_KEY = '4dabf18193072939515e22adb298388d';
export const SECRET_SIG = '1b47061264138c4ac30d75fd1eb44270';

/** How the wire (and so a preview's outputs) spells a value not known yet. */
export const UNKNOWN = '04da6b54-80e4-46f7-96ec-b56ff0331ba9';

export type PropertyMap = Record<string, unknown>;

interface SecretWrapper {
  [SIG_KEY]: typeof SECRET_SIG;
  value: unknown;
}

export function isSecret(value: unknown): value is SecretWrapper {
  return typeof value === 'object' && value !== null && (value as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

export function makeSecret(value: unknown): unknown {
  return isSecret(value) ? value : { [SIG_KEY]: SECRET_SIG, value };
}

/** The value with every secret wrapper removed, at any depth. */
export function stripSecrets(value: unknown): unknown {
  if (isSecret(value)) return stripSecrets(value.value);
  if (Array.isArray(value)) return value.map(stripSecrets);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stripSecrets(v)]));
  }
  return value;
}

export function stripMap(map: PropertyMap): PropertyMap {
  return stripSecrets(map) as PropertyMap;
}

export function containsSecret(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(containsSecret);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(containsSecret);
  return false;
}

/** Top-level keys whose value is or holds a secret. */
export function secretKeys(map: PropertyMap): string[] {
  return Object.keys(map).filter((key) => containsSecret(map[key]));
}

/** The engine's rule for providers that do not accept secrets: outputs named like a secret input, or
 *  listed in additionalSecretOutputs, are secret. */
export function markSecretOutputs(outputs: PropertyMap, secretNames: Iterable<string>): PropertyMap {
  const marked = { ...outputs };
  for (const key of secretNames) {
    if (key in marked) marked[key] = makeSecret(marked[key]);
  }
  return marked;
}

/**
 * Encrypts secret values for the state file, like the engine's passphrase secrets manager: a random
 * key per stack, AES-256-GCM, the engine's `{ <sig>: <secret sig>, ciphertext }` shape.
 */
export class StateCipher {
  readonly #key = randomBytes(32);

  seal(value: unknown): unknown {
    if (isSecret(value)) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(value.value ?? null), 'utf8'), cipher.final()]);
      const ciphertext = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
      return { [SIG_KEY]: SECRET_SIG, ciphertext };
    }
    if (Array.isArray(value)) return value.map((v) => this.seal(v));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.seal(v)]));
    }
    return value;
  }
}
