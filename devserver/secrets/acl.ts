/**
 * Policies: path patterns with capabilities, matched the way the reference server does it. A pattern is an exact
 * path, a prefix ending in `*`, or has `+` standing for one segment. When several patterns match, the most specific
 * wins (later first wildcard, no trailing glob, fewer `+`, longer, then lexically greater); capabilities of the same
 * pattern in several policies add up; `deny` wins over everything.
 */
import type { PolicyRule } from './state.js';

export const CAPABILITIES = ['create', 'read', 'update', 'patch', 'delete', 'list', 'sudo', 'deny'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const DEFAULT_POLICY: PolicyRule[] = [
  { path: 'auth/token/lookup-self', capabilities: ['read'] },
  { path: 'auth/token/renew-self', capabilities: ['update'] },
  { path: 'auth/token/revoke-self', capabilities: ['update'] },
  { path: 'sys/capabilities-self', capabilities: ['update'] },
];

/** Accepts `{ "<path>": ["read", ...] }` or the server's JSON policy document `{ "path": { "<path>": { "capabilities": [...] } } }`. */
export function parsePolicy(raw: unknown): PolicyRule[] {
  if (typeof raw === 'string') {
    const text = raw.trim();
    if (!text.startsWith('{')) return parseHclPolicy(text);
    try {
      raw = JSON.parse(text);
    } catch {
      throw new Error('policy is neither valid JSON nor HCL path blocks');
    }
  }
  if (!raw || typeof raw !== 'object') throw new Error('policy must be an object');
  const doc = raw as Record<string, unknown>;
  const entries: Array<[string, unknown]> =
    doc.path && typeof doc.path === 'object' && !Array.isArray(doc.path)
      ? Object.entries(doc.path as Record<string, unknown>).map(([p, v]) => [p, (v as { capabilities?: unknown })?.capabilities])
      : Object.entries(doc);
  return entries.map(([path, capabilities]) => {
    if (!Array.isArray(capabilities) || capabilities.some((c) => !CAPABILITIES.includes(c as Capability))) {
      throw new Error(`policy path ${JSON.stringify(path)}: capabilities must be a list of ${CAPABILITIES.join(', ')}`);
    }
    return { path: path.replace(/^\/+/, ''), capabilities: [...(capabilities as string[])] };
  });
}

/**
 * The HCL subset policies are written in: `path "<pattern>" { capabilities = ["read", ...] }` blocks, with `#` and
 * `//` comments. Anything else is refused rather than half-understood.
 */
export function parseHclPolicy(text: string): PolicyRule[] {
  const source = text.replace(/(^|\s)(#|\/\/)[^\n]*/g, '$1');
  const block = /\s*path\s+"([^"]*)"\s*\{\s*capabilities\s*=\s*\[([^\]]*)\]\s*\}\s*/y;
  const rules: PolicyRule[] = [];
  let index = 0;
  while (index < source.length) {
    block.lastIndex = index;
    const match = block.exec(source);
    if (!match) {
      if (source.slice(index).trim() === '') break;
      throw new Error(`cannot parse the policy near ${JSON.stringify(source.slice(index, index + 40).trim())}`);
    }
    const capabilities = match[2]
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)
      .map((c) => {
        const name = /^"([a-z]+)"$/.exec(c)?.[1];
        if (!name || !CAPABILITIES.includes(name as Capability)) throw new Error(`path ${JSON.stringify(match[1])}: unknown capability ${c}`);
        return name;
      });
    rules.push({ path: match[1].replace(/^\/+/, ''), capabilities });
    index = block.lastIndex;
  }
  if (rules.length === 0) throw new Error('the policy has no path blocks');
  return rules;
}

function matches(pattern: string, path: string): boolean {
  const glob = pattern.endsWith('*');
  const body = glob ? pattern.slice(0, -1) : pattern;
  if (!body.includes('+')) return glob ? path.startsWith(body) : path === body;
  const patternSegments = body.split('/');
  const pathSegments = path.split('/');
  if (pathSegments.length < patternSegments.length || (!glob && pathSegments.length !== patternSegments.length)) return false;
  return patternSegments.every((p, i) => {
    if (p === '+') return true;
    if (glob && i === patternSegments.length - 1) return pathSegments[i].startsWith(p);
    return p === pathSegments[i];
  });
}

function firstWildcard(pattern: string): number {
  const indexes = [pattern.indexOf('+'), pattern.indexOf('*')].filter((i) => i >= 0);
  return indexes.length ? Math.min(...indexes) : Number.POSITIVE_INFINITY;
}

/** positive when a is more specific than b */
function specificity(a: string, b: string): number {
  const wa = firstWildcard(a);
  const wb = firstWildcard(b);
  if (wa !== wb) return wa - wb;
  const ga = a.endsWith('*');
  const gb = b.endsWith('*');
  if (ga !== gb) return ga ? -1 : 1;
  const pa = a.split('+').length;
  const pb = b.split('+').length;
  if (pa !== pb) return pb - pa;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function capabilitiesFor(rules: PolicyRule[], path: string): Set<string> {
  let best: string | undefined;
  for (const rule of rules) {
    if (!matches(rule.path, path)) continue;
    if (best === undefined || specificity(rule.path, best) > 0) best = rule.path;
  }
  if (best === undefined) return new Set();
  const caps = new Set<string>();
  for (const rule of rules) if (rule.path === best) for (const c of rule.capabilities) caps.add(c);
  if (caps.has('deny')) return new Set();
  return caps;
}

/** True when some rule could grant anything at or below `prefix` (used for mount visibility and help). */
export function hasAnyAccessBelow(rules: PolicyRule[], prefix: string): boolean {
  return rules.some((rule) => {
    if (rule.capabilities.includes('deny') || rule.capabilities.length === 0) return false;
    const literal = rule.path.split(/[+*]/)[0];
    return literal.startsWith(prefix) || prefix.startsWith(literal);
  });
}
