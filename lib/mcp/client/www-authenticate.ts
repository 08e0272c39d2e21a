/**
 * `WWW-Authenticate` as RFC 7235 §4.1 writes it: one or more challenges, comma-separated, each an auth-scheme followed
 * by a token68 or by auth-params (`name=token` or `name="quoted string"` with backslash escapes), the commas between
 * params and between challenges told apart by what follows them. Several header fields are one list (RFC 9110 §5.3).
 */

export interface Challenge {
  /** The auth-scheme, lower-cased (`bearer`). */
  scheme: string;
  /** Parameter names lower-cased; values unquoted. A repeated name keeps its first value. */
  params: Record<string, string>;
  token68?: string;
}

const tchar = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;

/** Parses every challenge of the header (an array when the header came several times). Never throws. */
export function parseWwwAuthenticate(header: string | readonly string[] | undefined | null): Challenge[] {
  if (header === undefined || header === null) return [];
  const text = typeof header === 'string' ? header : header.join(', ');
  const challenges: Challenge[] = [];
  let i = 0;
  const n = text.length;
  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i += 1;
  };
  const token = (): string => {
    const start = i;
    while (i < n && tchar.test(text[i]!)) i += 1;
    return text.slice(start, i);
  };
  const quoted = (): string | undefined => {
    if (text[i] !== '"') return undefined;
    i += 1;
    let value = '';
    while (i < n) {
      const c = text[i]!;
      if (c === '\\' && i + 1 < n) {
        value += text[i + 1];
        i += 2;
        continue;
      }
      if (c === '"') {
        i += 1;
        return value;
      }
      value += c;
      i += 1;
    }
    return value; // unterminated: what there was
  };
  /** Skips to the next comma at this level (a malformed piece), past it. */
  const skipToComma = () => {
    while (i < n && text[i] !== ',') {
      if (text[i] === '"') quoted();
      else i += 1;
    }
  };

  while (i < n) {
    skipSpace();
    if (text[i] === ',') {
      i += 1;
      continue;
    }
    const scheme = token();
    if (scheme === '') {
      skipToComma();
      continue;
    }
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    challenges.push(challenge);
    skipSpace();
    // token68: letters, digits and -._~+/ followed by '='s, then the end, or a comma.
    const token68 = /^[A-Za-z0-9\-._~+/]+=*\s*(,|$)/.exec(text.slice(i));
    if (token68 && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*=\s*[^=,\s]/.test(text.slice(i))) {
      challenge.token68 = token68[0].replace(/\s*,?$/, '');
      i += token68[0].length;
      continue;
    }
    // auth-params until a comma followed by something that is not `name=` (the next challenge's scheme).
    for (;;) {
      skipSpace();
      const mark = i;
      const name = token();
      skipSpace();
      if (name === '' || text[i] !== '=') {
        i = mark; // the next challenge starts here (or garbage)
        break;
      }
      i += 1;
      skipSpace();
      const value = text[i] === '"' ? (quoted() ?? '') : token();
      const key = name.toLowerCase();
      if (!(key in challenge.params)) challenge.params[key] = value;
      skipSpace();
      if (text[i] === ',') {
        i += 1;
        // another param, or another challenge: look ahead for `name =`.
        skipSpace();
        const look = i;
        const next = token();
        skipSpace();
        const isParam = next !== '' && text[i] === '=';
        i = look;
        if (!isParam) break;
        continue;
      }
      if (i < n) skipToComma();
      break;
    }
  }
  return challenges;
}

/** The Bearer challenge's parameters (the first one), or undefined. */
export function bearerChallenge(header: string | readonly string[] | undefined | null): Record<string, string> | undefined {
  return parseWwwAuthenticate(header).find((c) => c.scheme === 'bearer')?.params;
}
