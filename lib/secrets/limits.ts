import { SecretsLimitError } from './errors.js';

/**
 * Request limits checked locally before anything is sent (SEC-LIMIT-REQUEST-SIZE, SEC-LIMIT-JSON-*). The service
 * refuses bodies over these limits anyway; checking first turns a late 413/400 (after uploading 32 MB) into an
 * immediate, precise error and guarantees nothing is sent.
 */
export interface RequestLimits {
  /** Largest request body in bytes (the listener's max_request_size; 32 MB). */
  maxRequestBytes: number;
  /** Nesting depth of objects and arrays; the top-level object is depth 1. */
  maxJsonDepth: number;
  /** Longest string (value or key), in UTF-8 bytes as the service counts them. */
  maxJsonStringValueLength: number;
  /** Most key-value pairs in one object. */
  maxJsonObjectEntryCount: number;
  /** Most elements in one array. */
  maxJsonArrayElementCount: number;
}

export const defaultLimits: Readonly<RequestLimits> = Object.freeze({
  maxRequestBytes: 32 * 1024 * 1024,
  maxJsonDepth: 500,
  maxJsonStringValueLength: 1_048_576,
  maxJsonObjectEntryCount: 10_000,
  maxJsonArrayElementCount: 10_000,
});

function utf8Length(value: string, limit: number): number {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short strings need no exact count.
  return value.length * 3 <= limit ? value.length : Buffer.byteLength(value, 'utf8');
}

/** Where a value sits, as a chain to its parent: the JSON pointer is only built for an error message. */
interface Place {
  parent: Place | undefined;
  key: string | number;
}

function pointer(place: Place | undefined): string {
  const path: (string | number)[] = [];
  for (let at = place; at; at = at.parent) path.unshift(at.key);
  return path.length === 0 ? 'the top level' : `/${path.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/**
 * Check a value against the four JSON limits without recursion (a hostile value may be deeper than the stack; a cycle ends at the depth limit), then
 * serialize it and check the byte size. Returns the body to send.
 */
export function serializeWithinLimits(value: unknown, limits: RequestLimits = defaultLimits): string {
  checkJsonLimits(value, limits);
  let body: string;
  try {
    body = JSON.stringify(value);
  } catch (error) {
    throw new SecretsLimitError('max_json_depth', limits.maxJsonDepth, NaN, `a value that cannot be serialized (${(error as Error).message})`);
  }
  if (body === undefined) body = 'null';
  checkBodySize(body, limits);
  return body;
}

export function checkBodySize(body: string | Buffer, limits: RequestLimits = defaultLimits): void {
  // Cheap bound first: a string of n code units is at most 3n bytes.
  const size = typeof body === 'string' ? (body.length * 3 <= limits.maxRequestBytes ? 0 : Buffer.byteLength(body, 'utf8')) : body.length;
  if (size > limits.maxRequestBytes) throw new SecretsLimitError('max_request_size', limits.maxRequestBytes, size, 'the request body');
}

export function checkJsonLimits(value: unknown, limits: RequestLimits = defaultLimits): void {
  const stack: { value: unknown; depth: number; place: Place | undefined }[] = [{ value, depth: 0, place: undefined }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'string') {
      const length = utf8Length(v, limits.maxJsonStringValueLength);
      if (length > limits.maxJsonStringValueLength)
        throw new SecretsLimitError('max_json_string_value_length', limits.maxJsonStringValueLength, length, pointer(item.place));
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') continue; // Dates and the like serialize to strings
    const depth = item.depth + 1;
    if (depth > limits.maxJsonDepth) throw new SecretsLimitError('max_json_depth', limits.maxJsonDepth, depth, pointer(item.place));
    if (Array.isArray(v)) {
      if (v.length > limits.maxJsonArrayElementCount)
        throw new SecretsLimitError('max_json_array_element_count', limits.maxJsonArrayElementCount, v.length, pointer(item.place));
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, place: { parent: item.place, key: i } });
    } else {
      const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined);
      if (keys.length > limits.maxJsonObjectEntryCount)
        throw new SecretsLimitError('max_json_object_entry_count', limits.maxJsonObjectEntryCount, keys.length, pointer(item.place));
      for (const key of keys) {
        const keyLength = utf8Length(key, limits.maxJsonStringValueLength);
        if (keyLength > limits.maxJsonStringValueLength)
          throw new SecretsLimitError('max_json_string_value_length', limits.maxJsonStringValueLength, keyLength, `a key in ${pointer(item.place)}`);
        stack.push({ value: (v as Record<string, unknown>)[key], depth, place: { parent: item.place, key } });
      }
    }
  }
}
