// One install of a registry module in a fresh plain-node process running the compiled library (dist/), so its peak
// RSS is gantry's alone: discovery, download location, streamed download + extraction + hash.
// Prints { ms, bytes, hash, maxRssMb, minorFaults, majorFaults, cpuMs } as one JSON line: faults and CPU (user + system,
// every thread) over the install, as `ms`; loading the library (~7 000 faults, ~0.7 s of CPU) is left out. Usage: node worker.mjs <source> <version> <dest>
import { silentLogger } from '../../dist/lib/log.js';
import { parseModuleAddress } from '../../dist/lib/registry/address.js';
import { RegistryClient } from '../../dist/lib/registry/client.js';
import { locate } from '../../dist/lib/registry/modules.js';
import { fetchSource } from '../../dist/lib/sources/fetch.js';

const [source, version, dest] = process.argv.slice(2);
const client = new RegistryClient({ env: {}, logger: silentLogger });
const before = process.resourceUsage();
const started = performance.now();
const address = parseModuleAddress(source, {});
const resolution = await locate(client, address, version);
const result = await fetchSource(resolution.location, { dest, http: client.http, limits: { maxBytes: 4 * 1024 ** 3, maxDownloadBytes: 4 * 1024 ** 3 } });
const ms = performance.now() - started;
client.close();
const usage = process.resourceUsage();
console.log(
  JSON.stringify({
    ms,
    bytes: result.bytes,
    hash: result.hash,
    maxRssMb: Math.round(usage.maxRSS / 1024),
    minorFaults: usage.minorPageFault - before.minorPageFault,
    majorFaults: usage.majorPageFault - before.majorPageFault,
    cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime - before.userCPUTime - before.systemCPUTime) / 1000),
  }),
);
