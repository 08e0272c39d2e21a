// Run by test/providers/lazy-operations.test.ts in a process of its own: imports the built `gantry/providers`, then
// calls what argv[2] names (a JSON list of [exportName, method, ...args]), and prints, as one JSON line after each
// step, the call's answer or error and the modules of this package loaded so far (paths relative to dist/). Module
// loads are seen through a load hook (node:module register, loaded-modules-hooks.mjs).
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const loaded = new Set();
port1.on('message', (url) => loaded.add(url));
port1.unref();
register('./loaded-modules-hooks.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });

const dist = new URL('../../../dist/', import.meta.url).href;
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
const report = async (step) => {
  await settle();
  const ours = [...loaded]
    .filter((url) => url.startsWith(dist))
    .map((url) => url.slice(dist.length))
    .sort();
  process.stdout.write(`${JSON.stringify({ step, modules: ours })}\n`);
};

const providers = await import(new URL('providers/index.js', dist).href);
await report('import');
for (const [exportName, method, ...args] of JSON.parse(process.argv[2] ?? '[]')) {
  let outcome;
  try {
    outcome = { answer: await providers[exportName][method](...args) };
  } catch (error) {
    outcome = { error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(`${JSON.stringify({ call: `${exportName}.${method}`, ...outcome })}\n`);
  await report(`${exportName}.${method}`);
}
