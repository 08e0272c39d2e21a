import { domainToASCII } from 'node:url';
import { expectOptions } from '../arguments.js';
import { UsageError } from '../errors.js';
import type { RegistryErrorCode } from './errors.js';

/** REG-SD-NO-HOSTNAME: the host used when an address names none; `GANTRY_REGISTRY_HOST` overrides it. */
export const publicRegistryHost = 'registry.terraform.io';

/** Hosts that are code forges, not registries: an address on them is almost always a mistyped git source. */
const forgeHosts = new Set(['github.com', 'bitbucket.org']);

const namePattern = /^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$/;
const providerPattern = /^[0-9a-z]{1,64}$/;
const labelPattern = /^[0-9a-z](?:[0-9a-z-]{0,61}[0-9a-z])?$/;

/** A registry module address: `[<host>/]<namespace>/<name>/<provider>[//<subdir>]`, normalised. */
export interface ModuleAddress {
  /** Normalised host: lower case, punycode, `:443` dropped, port without leading zeros. */
  host: string;
  namespace: string;
  name: string;
  provider: string;
  /** Cleaned sub-directory inside the module package, '' for the root. */
  subdir: string;
}

export class AddressError extends UsageError {
  constructor(message: string, hint?: string) {
    super(message, { code: 'INVALID_ADDRESS' satisfies RegistryErrorCode, ...(hint === undefined ? {} : { hint }) });
  }
}

/**
 * Normalises a registry host as Terraform's svchost.ForComparison does: lower case, IDNA to punycode, `:443` dropped,
 * leading zeros of the port dropped, port ≤ 65535. Throws an AddressError naming what is wrong.
 */
export function normaliseHost(given: string): string {
  if (typeof given !== 'string')
    throw new AddressError(`normaliseHost: the registry host must be a string such as "registry.example.com", got ${given === null ? 'null' : typeof given}`);
  const raw = given.trim();
  if (raw === '') throw new AddressError('the registry host is empty');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new AddressError(`the registry host "${raw}" is a URL`, 'give just a hostname and an optional port, e.g. registry.example.com:8443');
  }
  const colon = raw.indexOf(':');
  const namePart = colon === -1 ? raw : raw.slice(0, colon);
  const port = colon === -1 ? '' : normalisePort(raw, raw.slice(colon + 1));
  if (namePart.split('.').some((label) => label === '')) {
    throw new AddressError(`the registry host "${raw}" has an empty label (a leading, trailing or doubled dot)`);
  }
  const ascii = domainToASCII(namePart);
  if (ascii === '') throw new AddressError(`the registry host "${raw}" is not a valid hostname`);
  const labels = ascii.split('.');
  const bad = labels.find((label) => !labelPattern.test(label));
  if (bad !== undefined) {
    throw new AddressError(`the registry host "${raw}" has an invalid label "${bad}" (letters, digits and inner hyphens only)`);
  }
  if (ascii.length > 253) throw new AddressError(`the registry host "${raw}" is longer than 253 characters`);
  if (labels.length < 2) {
    throw new AddressError(`the registry host "${raw}" has no dot`, 'a registry host is a domain name such as registry.example.com');
  }
  return ascii + port;
}

function normalisePort(host: string, digits: string): string {
  if (!/^\d{1,10}$/.test(digits)) throw new AddressError(`the port of registry host "${host}" is not a number`);
  const port = Number(digits);
  if (port === 0 || port > 65535) throw new AddressError(`the port of registry host "${host}" is outside 1-65535`);
  return port === 443 ? '' : `:${port}`;
}

/** The host an address without one uses: `GANTRY_REGISTRY_HOST`, else the public registry. */
export function defaultRegistryHost(env: NodeJS.ProcessEnv = process.env): string {
  expectOptions('defaultRegistryHost', env, 'env');
  const configured = env.GANTRY_REGISTRY_HOST?.trim();
  return configured ? normaliseHost(configured) : publicRegistryHost;
}

/** Cleans a sub-directory path; refuses one that escapes the package with `..` or is absolute. */
export function cleanSubdir(subdir: string, what = 'sub-directory'): string {
  if (typeof subdir !== 'string')
    throw new AddressError(
      `cleanSubdir: the ${typeof what === 'string' ? what : 'sub-directory'} must be a string, got ${subdir === null ? 'null' : typeof subdir}`,
    );
  if (typeof what !== 'string') what = 'sub-directory';
  if (subdir.includes('\0') || subdir.includes('\\')) throw new AddressError(`the ${what} "${subdir}" contains a backslash or NUL`);
  if (subdir.startsWith('/')) throw new AddressError(`the ${what} "${subdir}" is absolute`);
  const parts: string[] = [];
  for (const part of subdir.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) throw new AddressError(`the ${what} "${subdir}" escapes the module package with ".."`);
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  return parts.join('/');
}

/** Parses `[<host>/]<namespace>/<name>/<provider>[//<subdir>]`. Errors name the part that is wrong. */
export function parseModuleAddress(source: string, env: NodeJS.ProcessEnv = process.env): ModuleAddress {
  if (typeof source !== 'string')
    throw new AddressError(`a module address must be a string such as "hashicorp/consul/aws", got ${source === null ? 'null' : typeof source}`);
  if (source.trim() === '') throw new AddressError('the module address is empty');
  expectOptions('parseModuleAddress', env, 'env');
  const text = source.trim();
  if (/^[a-z0-9]+::/i.test(text) || /^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new AddressError(`"${text}" is a download location, not a registry address`, 'a registry address looks like [host/]namespace/name/provider');
  }
  if (text.includes('?')) throw new AddressError(`the module address "${text}" has a query string; registry addresses take none`);
  const split = text.indexOf('//');
  const main = split === -1 ? text : text.slice(0, split);
  const subdir = split === -1 ? '' : cleanSubdir(text.slice(split + 2));
  const parts = main.split('/');
  if (parts.length !== 3 && parts.length !== 4) {
    throw new AddressError(
      `the module address "${text}" has ${parts.length} part${parts.length === 1 ? '' : 's'}`,
      'expected [host/]namespace/name/provider[//subdir]',
    );
  }
  let host: string;
  if (parts.length === 4) {
    host = normaliseHost(parts.shift() as string);
    const bare = host.replace(/:\d+$/, '');
    if (forgeHosts.has(bare)) {
      throw new AddressError(
        `${bare} is not a module registry`,
        `to use a repository on ${bare}, give a git source such as git::https://${bare}/<owner>/<repo>.git`,
      );
    }
  } else {
    host = defaultRegistryHost(env);
  }
  const [namespace, name, provider] = parts as [string, string, string];
  if (!namePattern.test(namespace)) {
    throw new AddressError(
      `the namespace "${namespace}" of "${text}" is invalid`,
      'use 1-64 letters, digits, "-" or "_", starting and ending with a letter or digit',
    );
  }
  if (!namePattern.test(name)) {
    throw new AddressError(
      `the module name "${name}" of "${text}" is invalid`,
      'use 1-64 letters, digits, "-" or "_", starting and ending with a letter or digit',
    );
  }
  if (!providerPattern.test(provider)) {
    throw new AddressError(`the provider "${provider}" of "${text}" is invalid`, 'use 1-64 lowercase letters and digits');
  }
  return { host, namespace, name, provider, subdir };
}

/**
 * An address as the public functions take it: the text `[host/]namespace/name/provider[//subdir]` (parsed with `env`'s
 * default host), or a ModuleAddress as parseModuleAddress returns it. Anything else is an AddressError (exit 2).
 */
export function toModuleAddress(value: ModuleAddress | string, env: NodeJS.ProcessEnv = process.env): ModuleAddress {
  if (typeof value === 'string') return parseModuleAddress(value, env);
  const v = value as unknown as Record<string, unknown> | null;
  if (v !== null && typeof v === 'object' && ['host', 'namespace', 'name', 'provider'].every((field) => typeof v[field] === 'string' && v[field] !== '')) {
    return {
      host: v.host as string,
      namespace: v.namespace as string,
      name: v.name as string,
      provider: v.provider as string,
      subdir: typeof v.subdir === 'string' ? v.subdir : '',
    };
  }
  throw new AddressError(
    `a module address must be a string such as "hashicorp/consul/aws" or an object from parseModuleAddress, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object without host, namespace, name and provider' : typeof value}`,
  );
}

/** The canonical text of an address: host always written, subdir after `//`. */
export function formatModuleAddress(address: ModuleAddress | string): string {
  address = toModuleAddress(address);
  const base = `${address.host}/${address.namespace}/${address.name}/${address.provider}`;
  return address.subdir ? `${base}//${address.subdir}` : base;
}

/**
 * The key of an address in the lock file and the manifest's "one version per address" rule: the canonical text with
 * namespace and name in lower case, since registries compare them case-insensitively (the host is already
 * normalised, the provider is lower case by rule; the subdir is a path and keeps its case). `gantry/net/aws` and
 * `GANTRY/Net/aws` are one module.
 */
export function moduleAddressKey(address: ModuleAddress | string): string {
  address = toModuleAddress(address);
  return formatModuleAddress({ ...address, namespace: address.namespace.toLowerCase(), name: address.name.toLowerCase() });
}

/** The package part of an address, without the sub-directory (what the registry knows). */
export function modulePackage(address: ModuleAddress | string): string {
  address = toModuleAddress(address);
  return `${address.namespace}/${address.name}/${address.provider}`;
}
