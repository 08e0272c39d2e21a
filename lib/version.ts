import { readFileSync } from 'node:fs';

function readVersion(): string {
  // dist/lib/version.js and lib/version.ts both sit two levels below package.json at most.
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gantry' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0';
}

export const version = readVersion();
export const userAgent = `gantry/${version}`;
