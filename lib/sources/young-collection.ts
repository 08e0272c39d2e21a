/**
 * Minor garbage collections paced by the bytes of a large archive, so that the buffers of its stream are given back
 * while they are few.
 *
 * Every socket read, zlib output chunk and tar slice of an install is an ArrayBuffer whose memory (outside V8's heap)
 * is freed only when a collection finds its small JavaScript owner dead. Left to itself, V8 collects when about 64 MB
 * of them have piled up; glibc then hands the batch back to the kernel and the next one faults in again, page by page.
 * On the VMs CI runs on a page fault costs ~16 µs: a 200 MB install took 30 000–50 000 faults and twice `tar xzf`'s
 * time. A minor collection every few MiB keeps the stream's memory a few MiB that malloc reuses while it is hot
 * (docs/performance.md, "Modules": on Node 20 a 198 MB install 2.4–2.8 s → 1.7–2.0 s and 40 % less CPU; on Node 24
 * peak RSS 160 → 107 MB).
 *
 * The collection function is V8's `gc`, obtained as Jest's leak detection obtains it: `--expose-gc` set for one
 * synchronous `vm.runInNewContext('gc')` and unset again, so no other context — the host program's or any made later —
 * gets a `gc`. A process started with `--expose-gc` has it already and keeps its flag. It is obtained once, when an
 * archive first reaches the pace: a small module (a pin's few KiB) never pays for the context.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

type Collect = (options: { type: 'minor' }) => void;

/**
 * How many bytes between two minor collections, counted apart for what comes in (compressed) and for the content
 * written, both garbage (measured on the download alone: 4–8 MiB gained, 16 MiB lost the gain).
 */
export const youngCollectionBytes = 8 * 1024 * 1024;

let collect: Collect | null | undefined;

function obtain(): Collect | null {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as Collect;
  // A process started with --expose-gc keeps the flag: it is only ever set back when this module set it.
  const startedWithGc = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((flag) => /^--expose[-_]gc$/.test(flag));
  try {
    v8.setFlagsFromString('--expose-gc');
    const made: unknown = vm.runInNewContext('gc');
    return typeof made === 'function' ? (made as Collect) : null;
  } catch {
    return null;
  } finally {
    if (!startedWithGc) v8.setFlagsFromString('--no-expose-gc');
  }
}

let collections = 0;

/** Runs one minor collection; false where V8's `gc` cannot be had (an embedder that refuses the flag). */
export function collectYoung(): boolean {
  // Asked once: where V8 refused (null), the flag is not toggled again for every few MiB.
  if (collect === undefined) collect = obtain();
  if (!collect) return false;
  collect({ type: 'minor' });
  collections += 1;
  return true;
}

/** How many collections the pacing has run in this process. */
export function pacedCollections(): number {
  return collections;
}

/** A counter of a stream's bytes that runs a minor collection each time `everyBytes` more have passed. */
export function youngCollector(everyBytes = youngCollectionBytes): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < everyBytes) return;
    since = 0;
    collectYoung();
  };
}
