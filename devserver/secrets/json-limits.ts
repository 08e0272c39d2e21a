/**
 * The listener's four JSON limits, checked by scanning the raw bytes before anything is parsed, so a hostile body
 * (a million nested arrays, a 10 MB string, a huge object) is refused without building it in memory first.
 * Like the reference server, only bodies that start with `{` or `[` are scanned, string lengths count raw bytes between
 * the quotes (escapes included), and a key repeated in one object is refused.
 */
export interface JsonLimits {
  maxDepth: number;
  maxStringValueLength: number;
  maxObjectEntryCount: number;
  maxArrayElementCount: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 500,
  maxStringValueLength: 1_048_576,
  maxObjectEntryCount: 10_000,
  maxArrayElementCount: 10_000,
};

/** A limit was exceeded; `syntax` marks malformed JSON found on the way (the parser then reports it). */
export class JsonLimitError extends Error {
  constructor(
    message: string,
    readonly syntax = false,
  ) {
    super(message);
  }
}

const syntaxError = (message: string) => new JsonLimitError(message, true);

interface Frame {
  isObject: boolean;
  count: number;
  expectKey: boolean;
  keys?: Set<string>;
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Throws JsonLimitError for a limit breach or malformed JSON; returns normally when the body may be parsed. */
export function checkJsonLimits(body: Buffer, limits: JsonLimits): void {
  let i = 0;
  const n = body.length;
  const skip = () => {
    while (i < n && SPACE.has(body[i])) i++;
  };
  skip();
  if (i >= n || (body[i] !== 0x7b && body[i] !== 0x5b)) return;
  const stack: Frame[] = [];
  const countElement = (top: Frame | undefined) => {
    if (top && !top.isObject && ++top.count > limits.maxArrayElementCount) {
      throw new JsonLimitError('JSON array exceeds allowed element count');
    }
  };
  while (true) {
    skip();
    if (i >= n) break;
    const top = stack[stack.length - 1] as Frame | undefined;
    const c = body[i];
    if (c === 0x7b || c === 0x5b) {
      countElement(top);
      if (stack.length + 1 > limits.maxDepth) throw new JsonLimitError('JSON input exceeds allowed nesting depth');
      stack.push({ isObject: c === 0x7b, count: 0, expectKey: c === 0x7b, keys: c === 0x7b ? new Set() : undefined });
      i++;
    } else if (!top) {
      throw syntaxError(`invalid character '${String.fromCharCode(c)}' after top-level value`);
    } else if (c === 0x7d || c === 0x5d) {
      if ((c === 0x7d) !== top.isObject) throw syntaxError(`malformed JSON: mismatched closing delimiter '${String.fromCharCode(c)}'`);
      stack.pop();
      i++;
      if (stack.length === 0) {
        skip();
        if (i < n) throw syntaxError(`invalid character '${String.fromCharCode(body[i])}' after top-level value`);
        return;
      }
    } else if (c === 0x22) {
      const start = i;
      i++;
      let length = 0;
      while (true) {
        if (i >= n) throw syntaxError('malformed JSON, unclosed string');
        const b = body[i];
        if (b === 0x22) break;
        if (b === 0x5c) {
          i++;
          length++;
        }
        i++;
        length++;
        if (length > limits.maxStringValueLength) throw new JsonLimitError('JSON string value exceeds allowed length');
      }
      i++;
      if (top.isObject && top.expectKey) {
        let key: string;
        try {
          key = JSON.parse(body.toString('utf8', start, i)) as string;
        } catch {
          throw syntaxError('malformed JSON string');
        }
        if (top.keys!.has(key)) throw new JsonLimitError(`duplicate key '${key}' in object`);
        top.keys!.add(key);
        if (++top.count > limits.maxObjectEntryCount) throw new JsonLimitError('JSON object exceeds allowed entry count');
        top.expectKey = false;
      } else {
        countElement(top);
      }
    } else if (c === 0x2c) {
      if (top.isObject) top.expectKey = true;
      i++;
    } else if (c === 0x3a) {
      i++;
    } else {
      // numbers and literals: their length counts against the string limit too
      const start = i;
      while (i < n && !SPACE.has(body[i]) && body[i] !== 0x2c && body[i] !== 0x7d && body[i] !== 0x5d) i++;
      if (i - start > limits.maxStringValueLength) throw new JsonLimitError('JSON number value exceeds allowed length');
      countElement(top);
    }
  }
  if (stack.length > 0) throw syntaxError('malformed JSON, unclosed containers');
}
