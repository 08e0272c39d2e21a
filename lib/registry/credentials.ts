import { registerSecret } from '../http/index.js';
import { normaliseHost } from './address.js';

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
  if (!name.toUpperCase().startsWith(prefix)) return undefined;
  const encoded = name.slice(prefix.length);
  if (encoded === '') return undefined;
  const decoded = encoded.split('__').map((part) => part.replace(/_/g, '.')).join('-');
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

export function createTokenSource(env: NodeJS.ProcessEnv = process.env, tokens: Record<string, string> = {}): TokenSource {
  const fromEnv = new Map<string, string>();
  for (const prefix of ['TF_TOKEN_', 'GANTRY_TOKEN_']) {
    for (const [name, value] of Object.entries(env)) {
      if (!value) continue;
      const host = hostFromVariable(name, prefix);
      if (host !== undefined) fromEnv.set(host, value);
    }
  }
  const explicit = new Map<string, string>();
  for (const [host, token] of Object.entries(tokens)) explicit.set(normaliseHost(host), token);
  for (const token of [...fromEnv.values(), ...explicit.values()]) registerSecret(token);
  return {
    tokenFor(host: string) {
      return explicit.get(host) ?? fromEnv.get(host) ?? fromEnv.get(host.replace(/:\d+$/, ''));
    },
  };
}
