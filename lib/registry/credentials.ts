import { UsageError } from '../errors.js';
import { expectOptions, expectString } from '../arguments.js';
import { registerSecret } from '../http/index.js';
import { normaliseHost } from './address.js';
import { readCliConfigCredentials } from './cliconfig.js';
import type { RegistryErrorCode } from './errors.js';

/**
 * Registry tokens per host from the environment: `GANTRY_TOKEN_<host>` and, for compatibility, Terraform's
 * `TF_TOKEN_<host>`. The host is encoded as Terraform does: `__` stands for `-`, `_` for `.`, the name is compared
 * case-insensitively and may be in Unicode or punycode. `GANTRY_TOKEN_` wins over `TF_TOKEN_` for the same host.
 *
 * An environment variable name cannot hold a port, so a token set for `example.com` is used for every port of
 * `example.com` (Terraform cannot express a port here at all). Explicit `tokens` given by a caller are matched on the
 * exact host, port included, and win over the environment.
 */
export function hostFromVariable(name: string, prefix: string): string | undefined {
  expectString('hostFromVariable', 'name', name, 'an environment variable name');
  expectString('hostFromVariable', 'prefix', prefix, 'a prefix such as "TF_TOKEN_"');
  if (!name.toUpperCase().startsWith(prefix)) return undefined;
  const encoded = name.slice(prefix.length);
  if (encoded === '') return undefined;
  const decoded = encoded
    .split('__')
    .map((part) => part.replace(/_/g, '.'))
    .join('-');
  try {
    return normaliseHost(decoded);
  } catch {
    return undefined;
  }
}

export interface TokenSource {
  /** The bearer token for a registry host (normalised, may carry a port), or undefined. */
  tokenFor(host: string): string | undefined;
}

export interface TokenSourceOptions {
  /**
   * Read the credentials blocks of Terraform's CLI configuration (TF_CLI_CONFIG_FILE, ~/.terraformrc,
   * ~/.terraform.d/*.tfrc(.json)) when no variable names a host. Default true; read once, on the first such host.
   */
  terraformConfig?: boolean;
  /** Hears of a configuration file that is named but missing (Terraform ignores it silently; the command logs it at debug level). */
  note?: (message: string) => void;
}

/**
 * Tokens in Terraform's order of precedence, Gantry's own first: explicit `tokens` (exact host), `GANTRY_TOKEN_<host>`,
 * `TF_TOKEN_<host>` (both for every port of the host), then a `credentials "<host>"` block of Terraform's CLI
 * configuration (exact host, port included, as Terraform matches it). Credentials helpers are not run.
 */
export function createTokenSource(env: NodeJS.ProcessEnv = process.env, tokens: Record<string, string> = {}, options: TokenSourceOptions = {}): TokenSource {
  expectOptions('createTokenSource', env, 'env');
  expectOptions('createTokenSource', tokens, 'tokens');
  expectOptions('createTokenSource', options);
  const fromEnv = new Map<string, string>();
  for (const prefix of ['TF_TOKEN_', 'GANTRY_TOKEN_']) {
    for (const [name, value] of Object.entries(env)) {
      if (!value) continue;
      const host = hostFromVariable(name, prefix);
      if (host !== undefined) fromEnv.set(host, value);
    }
  }
  const explicit = new Map<string, string>();
  for (const [host, token] of Object.entries(tokens)) {
    if (typeof token !== 'string' || token === '')
      throw new UsageError(`the token given for ${host} is not a non-empty string`, { code: 'INVALID_TOKEN' satisfies RegistryErrorCode });
    explicit.set(normaliseHost(host), token);
  }
  for (const token of [...fromEnv.values(), ...explicit.values()]) registerSecret(token);
  let fromConfig: Map<string, string> | undefined;
  const configured = (host: string) => {
    if (options.terraformConfig === false) return undefined;
    fromConfig ??= readCliConfigCredentials(env, options.note);
    return fromConfig.get(host);
  };
  return {
    tokenFor(host: string) {
      return explicit.get(host) ?? fromEnv.get(host) ?? fromEnv.get(host.replace(/:\d+$/, '')) ?? configured(host);
    },
  };
}
