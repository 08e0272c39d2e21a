/**
 * Where symbolic links in an extracted tree really lead. Checking each link's own text is not enough: with
 * `p/q/x -> ../..` and `p/q/l -> x/../../..`, both texts stay inside on their own, but `l` reaches the parent of the
 * root, since `..` after a link is taken from where the link leads, not from where it stands. So every link is
 * followed as the kernel would, through the links it passes, inside a map of the tree's links.
 */

import { SourceRefusedError } from './limits.js';

/** Links followed in one resolution before it counts as a loop (Linux gives up after 40, ELOOP). */
const maxHops = 40;

/**
 * The link of `links` (tree path → target text, `/`-separated, relative to the tree's root) whose target, followed
 * through the others, leaves the root or loops; undefined when every link stays inside.
 */
function findEscapingLink(links: ReadonlyMap<string, string>): { path: string; target: string; reason: string } | undefined {
  for (const [path, target] of links) {
    const reason = escapeOf(links, path, target);
    if (reason) return { path, target, reason };
  }
  return undefined;
}

function escapeOf(links: ReadonlyMap<string, string>, path: string, target: string): string | undefined {
  const hops = { count: 0 };
  const start = path.split('/').slice(0, -1);
  const resolved = follow(links, start, target, hops);
  if (resolved === 'loop') return `following it goes round in a loop of links (more than ${maxHops})`;
  if (resolved === 'outside') return 'it points outside the module once the links it passes through are followed';
  return undefined;
}

/** Resolves `target` from the folder `from` (path parts); each link met on the way is followed in turn. */
function follow(links: ReadonlyMap<string, string>, from: string[], target: string, hops: { count: number }): string[] | 'outside' | 'loop' {
  if (target.startsWith('/')) return 'outside';
  const at = [...from];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (at.length === 0) return 'outside';
      at.pop();
      continue;
    }
    at.push(part);
    const link = links.get(at.join('/'));
    if (link === undefined) continue;
    hops.count += 1;
    if (hops.count > maxHops) return 'loop';
    at.pop();
    const next = follow(links, at, link, hops);
    if (typeof next === 'string') return next;
    at.splice(0, at.length, ...next);
  }
  return at;
}

/** Refuses the tree (SourceRefusedError naming the link) when one of its links leaves the root or loops. */
export function refuseEscapingLinks(links: ReadonlyMap<string, string>): void {
  const escaping = findEscapingLink(links);
  if (escaping) throw new SourceRefusedError(`the symbolic link "${escaping.path}" (-> "${escaping.target}") is refused: ${escaping.reason}`);
}
