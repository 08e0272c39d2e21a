/**
 * `gantry doctor`: what this machine has of what Gantry needs. Node against package.json's engines; each system
 * package of scripts/system-packages.json (the list `npm run setup` installs) found where the commands would find it
 * (Chromium and chromedriver through the very resolvers the gates and browser checks use), its version, and Chromium's
 * and chromedriver's majors matching; the configured endpoints reachable. Every check that fails says how to fix it.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import semver from 'semver';
import { resolveChromeDriverPath, resolveChromePath } from '../browser/locate.js';
import { redact } from '../redact.js';
import type { Logger } from '../log.js';
import { packageRoot } from '../paths.js';
import { installCommand, setupCommand, systemPackages, type SystemPackage } from '../system-packages.js';
import { checkEndpoints } from './endpoints.js';
import type { CheckStatus, DoctorCheck, DoctorReport } from './types.js';

export type { CheckStatus, DoctorCheck, DoctorReport } from './types.js';

export interface DoctorOptions {
  env?: NodeJS.ProcessEnv;
  /** Each version command and each endpoint probe (default 5 s). */
  timeoutMs?: number;
  /** Check this registry host's discovery even when GANTRY_REGISTRY_HOST is unset. */
  registryHost?: string;
  platform?: NodeJS.Platform;
  logger?: Logger;
}

const failing = new Set<CheckStatus>(['missing', 'mismatch', 'unreachable', 'error']);

export function isFailure(check: DoctorCheck): boolean {
  return failing.has(check.status);
}

function checkNode(): DoctorCheck {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { engines?: { node?: string } };
  const wanted = pkg.engines?.node ?? '*';
  const version = process.versions.node;
  const ok = semver.satisfies(version, wanted);
  return {
    check: 'node',
    kind: 'node',
    status: ok ? 'ok' : 'mismatch',
    detail: ok ? `${version} (${process.execPath})` : `${version}, Gantry needs ${wanted}`,
    path: process.execPath,
    version,
    neededFor: 'everything',
    ...(ok ? {} : { fix: `install Node.js ${wanted} (22 is the safer choice)` }),
  };
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Where `spawn(command)` would find it: the first executable file of that name on PATH. */
function onPath(command: string, env: NodeJS.ProcessEnv): string | undefined {
  return (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, command))
    .find(isExecutableFile);
}

/** What a version command printed, within `timeoutMs`; stderr only when stdout has nothing (bzip2 --help). */
function versionOf(
  path: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ version?: string; problem?: string; said?: string }> {
  return new Promise((resolve) => {
    const child = spawn(path, args, { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (stdout.length < 8192) stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      if (stderr.length < 8192) stderr += text;
    });
    child.on('error', (error: NodeJS.ErrnoException) => resolve({ problem: `cannot run it (${error.code ?? error.message})` }));
    child.on('close', (_code, signal) => {
      // Chromium's wrapper script may complain on stderr before printing its version: stderr is the fallback only.
      const pattern = /\d+(?:\.\d+)+/;
      const version = (pattern.exec(stdout) ?? pattern.exec(stderr))?.[0];
      if (version) resolve({ version, said: (stdout.trim() || stderr.trim()).split('\n')[0]!.slice(0, 120) });
      else resolve({ problem: signal ? `${args.join(' ')} did not answer within ${timeoutMs} ms` : `${args.join(' ')} printed no version` });
    });
  });
}

const major = (version: string | undefined) => (version === undefined ? undefined : Number(version.split('.')[0]));

/** How each package is found: Chromium and chromedriver by the resolvers of lib/browser, the others on PATH. */
const locators: Record<string, { variable: string; resolve: (env: NodeJS.ProcessEnv) => string; identity: RegExp; kind: string }> = {
  chromium: { variable: 'CHROME_PATH', resolve: (env) => resolveChromePath(undefined, env), identity: /chrom(?:e|ium)/i, kind: 'Chromium or Chrome' },
  chromedriver: { variable: 'CHROMEDRIVER_PATH', resolve: (env) => resolveChromeDriverPath(undefined, env), identity: /chromedriver/i, kind: 'chromedriver' },
};

async function checkPackage(pkg: SystemPackage, env: NodeJS.ProcessEnv, timeoutMs: number, platform: NodeJS.Platform): Promise<DoctorCheck> {
  const install = installCommand([pkg], platform);
  const common = { check: pkg.name, kind: 'package' as const, neededFor: pkg.features };
  const locator = locators[pkg.name];
  let path: string | undefined;
  if (locator) {
    try {
      path = locator.resolve(env);
    } catch (error) {
      const detail = redact(error instanceof Error ? error.message : String(error));
      const fix = env[locator.variable]
        ? `point ${locator.variable} at a working binary, or unset it and ${install}`
        : `${install}, or set ${locator.variable}`;
      return { ...common, status: 'missing', detail, fix };
    }
  } else {
    path = onPath(pkg.command, env);
    if (!path) return { ...common, status: pkg.testsOnly ? 'missing (tests only)' : 'missing', detail: `no ${pkg.command} on PATH`, fix: install };
  }
  const { version, problem, said } = await versionOf(path, pkg.versionArgs, env, timeoutMs);
  if (problem) return { ...common, status: 'error', detail: `${path}: ${problem}`, path, fix: locator ? `${install}, or set ${locator.variable}` : install };
  // Any program answers --version with a number (`CHROME_PATH=/bin/sleep`): the browser and driver must also say what they are.
  if (locator && !locator.identity.test(said ?? '')) {
    return {
      ...common,
      status: 'error',
      detail: `${path} is not ${locator.kind}: its ${pkg.versionArgs.join(' ')} said ${JSON.stringify(said ?? '')}`,
      path,
      fix: env[locator.variable] ? `point ${locator.variable} at ${locator.kind}, or unset it` : install,
    };
  }
  return { ...common, status: 'ok', detail: `${version} (${path})`, path, ...(version ? { version } : {}) };
}

/** Chromium and chromedriver both found but of different majors: the driver refuses the browser, so it is the mismatch. */
function markMismatch(checks: DoctorCheck[], env: NodeJS.ProcessEnv, platform: NodeJS.Platform): void {
  const chromium = checks.find((check) => check.check === 'chromium');
  const driver = checks.find((check) => check.check === 'chromedriver');
  if (chromium?.status !== 'ok' || driver?.status !== 'ok') return;
  const browserMajor = major(chromium.version);
  const driverMajor = major(driver.version);
  if (browserMajor === undefined || driverMajor === undefined || browserMajor === driverMajor) return;
  const pair = systemPackages().filter((pkg) => pkg.name === 'chromium' || pkg.name === 'chromedriver');
  driver.status = 'mismatch';
  driver.detail = `${driver.detail}: major ${driverMajor}, Chromium is ${browserMajor}`;
  driver.neededFor = `browser checks, which need a chromedriver of Chromium's major (${browserMajor})`;
  driver.fix =
    env.CHROMEDRIVER_PATH || env.CHROME_PATH
      ? `point CHROMEDRIVER_PATH and CHROME_PATH at a matching pair (both major ${browserMajor}, or both ${driverMajor})`
      : `${installCommand(pair, platform)} (a matching pair), or set CHROMEDRIVER_PATH to a chromedriver ${browserMajor}`;
}

/** Runs every check (packages and endpoints in parallel) and says whether anything a feature needs is missing. */
export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 5000;
  const platform = options.platform ?? process.platform;
  const packages = systemPackages();
  const checks = await Promise.all([
    Promise.resolve(checkNode()),
    ...packages.map((pkg) => checkPackage(pkg, env, timeoutMs, platform)),
    ...checkEndpoints({ env, timeoutMs, logger: options.logger, registryHost: options.registryHost }),
  ]);
  markMismatch(checks, env, platform);
  // A mismatch is not fixed by installing what is missing: its row says what to do.
  const broken = packages.filter((pkg) => checks.some((check) => check.check === pkg.name && (check.status === 'missing' || check.status === 'error')));
  return {
    ok: !checks.some(isFailure),
    checks,
    ...(broken.length > 0 ? { setup: setupCommand(broken, platform) } : {}),
  };
}
