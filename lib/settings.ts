/**
 * The one way a client resolves its settings: the options given in code (or the command's flags, which the command
 * passes as options), then the environment, then Pulumi config, then the documented default. Each area keeps a table
 * of its settings (`{ address: { env: 'SECRETS_ADDR', pulumi: 'gantry:secretsAddr' } }`) and parses the values it
 * picks; this module only decides where each one comes from, and refuses option keys no client reads — a mistyped
 * `{ adress }` would otherwise pass silently and the client fall back to a default (got refuses them alike).
 */
import { UsageError } from './errors.js';
import { closestName } from './spelling.js';

/** Where a setting came from, for `--verbose` and error messages (never the value). */
export type SettingOrigin = 'option' | 'environment' | 'pulumi' | 'default';

/** A Pulumi config lookup: `key` is the full key, e.g. `gantry:secretsAddr`. */
export type PulumiConfigLookup = (key: string) => string | undefined;

/** Where a setting is read besides the options: environment variables (the first one set wins) and a Pulumi key. */
export interface SettingSpec {
  env?: string | readonly string[];
  pulumi?: string;
}

export interface SettingSources {
  /** Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Pulumi config; default `PULUMI_CONFIG` in `env`. Given as undefined: none. A provider passes its Configure settings. */
  pulumi?: PulumiConfigLookup | undefined;
  /** How an option is named in messages: `option <key>` unless given (the command gives its flags, `--address`). */
  optionNames?: Readonly<Record<string, string | undefined>>;
}

/** A value found for a setting, and the name of where it was found (an option, flag, variable or Pulumi key). */
export interface Picked {
  value: unknown;
  from: string;
  origin: Exclude<SettingOrigin, 'default'>;
}

export interface SettingsReader<K extends string> {
  /** The setting from the option (when given), else the environment, else Pulumi config; undefined: use the default. */
  pick(key: K, option: unknown, optionName?: string): Picked | undefined;
  /** `pick` as text. */
  text(key: K, option: unknown): string | undefined;
  /** Where each setting picked so far came from (`default` when nothing gave it). */
  readonly origins: Partial<Record<K, SettingOrigin>>;
  /** The name a message gives the source of a setting picked so far; undefined for a default. */
  sourceName(key: K): string | undefined;
  readonly env: NodeJS.ProcessEnv;
}

/** An empty value is no value, in every layer: `SECRETS_ADDR=` leaves the address to Pulumi config or the default. */
function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** A lookup over a map of full keys (`gantry:platformApiUrl` → value): strings as they are, other values as JSON. */
export function pulumiConfigLookup(map: Readonly<Record<string, unknown>>): PulumiConfigLookup {
  return (key) => {
    const value = Object.hasOwn(map, key) ? map[key] : undefined;
    return typeof value === 'string' ? value : value === undefined || value === null ? undefined : JSON.stringify(value);
  };
}

/**
 * Pulumi config as the Pulumi runtime passes it to a program or a dynamic provider: the `PULUMI_CONFIG`
 * environment variable, a JSON object keyed `project:key`. Returns undefined outside Pulumi.
 */
export function pulumiConfigFromEnvironment(env: NodeJS.ProcessEnv = process.env): PulumiConfigLookup | undefined {
  const raw = env.PULUMI_CONFIG;
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  return pulumiConfigLookup(parsed as Record<string, unknown>);
}

/** Reads the settings of `table` from the options given to `pick`, then `sources`' environment and Pulumi config. */
export function settingsReader<T extends Readonly<Record<string, SettingSpec>>>(table: T, sources: SettingSources = {}): SettingsReader<keyof T & string> {
  type K = keyof T & string;
  const env = sources.env ?? process.env;
  const pulumi = 'pulumi' in sources ? sources.pulumi : pulumiConfigFromEnvironment(env);
  const origins: Partial<Record<K, SettingOrigin>> = {};
  const names: Partial<Record<K, string>> = {};

  const pick = (key: K, option: unknown, optionName?: string): Picked | undefined => {
    const spec: SettingSpec = table[key] ?? {};
    let found: Picked | undefined;
    if (given(option)) {
      found = { value: option, from: sources.optionNames?.[key] ?? optionName ?? `option ${key}`, origin: 'option' };
    } else {
      const variables: readonly string[] = typeof spec.env === 'string' ? [spec.env] : (spec.env ?? []);
      const variable = variables.find((name) => given(env[name]));
      if (variable !== undefined) found = { value: env[variable], from: variable, origin: 'environment' };
      else if (spec.pulumi !== undefined) {
        const fromPulumi = pulumi?.(spec.pulumi);
        if (given(fromPulumi)) found = { value: fromPulumi, from: spec.pulumi, origin: 'pulumi' };
      }
    }
    origins[key] = found?.origin ?? 'default';
    if (found) names[key] = found.from;
    else delete names[key];
    return found;
  };

  return {
    pick,
    text(key, option) {
      const found = pick(key, option);
      return found === undefined ? undefined : String(found.value);
    },
    origins,
    sourceName: (key) => names[key],
    env,
  };
}

/**
 * The keys an options type takes, written once as `{ address: true, … }`: the compiler refuses a key the type lacks
 * and asks for every key it has, so the list cannot drift from the interface.
 */
export function optionKeys<T extends object>(keys: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.freeze(Object.keys(keys));
}

/**
 * Refuses an option key the client does not read (exit 2), naming it and the closest known key. `name` is how
 * messages call the object (`options`, `options.limits`). Keys of an object's prototype are not looked at.
 */
export function refuseUnknownOptions(where: string, options: object | undefined, known: readonly string[], name = 'options'): void {
  if (options === undefined || options === null) return;
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const shownKey = JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key);
    const near = closestName(key, known);
    throw new UsageError(`${where}: unknown option ${shownKey} in ${name}${near ? ` (did you mean "${near}"?)` : ''}`, {
      code: 'UNKNOWN_OPTION',
      hint: `${name} takes ${known.join(', ')}`,
    });
  }
}
