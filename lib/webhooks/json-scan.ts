/**
 * A JSON text checked without building it: `scanJsonObject` walks the bytes of a delivery's body once, as
 * JSON.parse would read them, and says where the root object's members are — so that the receiver can check a
 * large payload against the event catalogue, and refuse it when it is malformed, without a 25 MB string and a
 * ~40 MB object graph that no handler will read. It is strict in the one direction that matters: it answers
 * `undefined` for anything it does not see as a JSON object (the caller then parses the text itself, for the exact
 * refusal or, if the scan was stricter than JSON.parse, the payload), never members for a text JSON.parse refuses.
 * The bytes must already be valid UTF-8 (isUtf8): every byte of a multi-byte character is ≥ 0x80, which the scan
 * only ever meets inside strings.
 */

export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'literal';

/** One member of the root object: its key's bytes (with the quotes), its value's bytes and kind. */
export interface JsonMember {
  keyStart: number;
  keyEnd: number;
  start: number;
  end: number;
  kind: JsonKind;
  /** For an array: how many elements, and how many of them are objects, strings and null. */
  elements?: { count: number; objects: number; strings: number; nulls: number };
}

const OBJECT = 0;
const ARRAY = 1;

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/**
 * The members of the JSON object that `bytes` holds from `from` (whitespace around it allowed, as JSON.parse allows
 * it: space, tab, line feed, carriage return), in order, duplicates included (JSON.parse keeps the last); undefined
 * when the text is not exactly one JSON object.
 */
export function scanJsonObject(bytes: Uint8Array, from = 0): JsonMember[] | undefined {
  const n = bytes.length;
  let i = from;
  const stack: number[] = [];
  const members: JsonMember[] = [];
  let member: JsonMember | undefined;

  const skipWhitespace = () => {
    for (;;) {
      const c = bytes[i];
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i += 1;
      else return;
    }
  };
  /** At a quote: past the string's closing quote, or false. */
  const scanString = (): boolean => {
    i += 1;
    while (i < n) {
      const c = bytes[i]!;
      if (c === 0x22) {
        i += 1;
        return true;
      }
      if (c === 0x5c) {
        const e = bytes[i + 1];
        // \" \\ \/ \b \f \n \r \t
        if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
          i += 2;
          continue;
        }
        if (e === 0x75 && isHex(bytes[i + 2]) && isHex(bytes[i + 3]) && isHex(bytes[i + 4]) && isHex(bytes[i + 5])) {
          i += 6;
          continue;
        }
        return false;
      }
      if (c < 0x20) return false;
      i += 1;
    }
    return false;
  };
  const scanNumber = (): boolean => {
    if (bytes[i] === 0x2d) i += 1;
    if (bytes[i] === 0x30) i += 1;
    else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i += 1;
    else return false;
    if (bytes[i] === 0x2e) {
      i += 1;
      if (!isDigit(bytes[i])) return false;
      while (isDigit(bytes[i])) i += 1;
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      i += 1;
      if (bytes[i] === 0x2b || bytes[i] === 0x2d) i += 1;
      if (!isDigit(bytes[i])) return false;
      while (isDigit(bytes[i])) i += 1;
    }
    return true;
  };
  const scanLiteral = (text: readonly number[]): boolean => {
    for (let k = 0; k < text.length; k += 1) if (bytes[i + k] !== text[k]) return false;
    i += text.length;
    return true;
  };
  /** A key and its colon; the member it starts when the key is the root object's. */
  const scanKey = (): boolean => {
    skipWhitespace();
    if (bytes[i] !== 0x22) return false;
    const keyStart = i;
    if (!scanString()) return false;
    const keyEnd = i;
    skipWhitespace();
    if (bytes[i] !== 0x3a) return false;
    i += 1;
    if (stack.length === 1) member = { keyStart, keyEnd, start: -1, end: -1, kind: 'literal' };
    return true;
  };
  /** Past an object's or array's opening bracket; true when it closes at once (`{}`, `[]`). */
  const openContainer = (container: typeof OBJECT | typeof ARRAY, close: number): boolean => {
    i += 1;
    skipWhitespace();
    stack.push(container);
    if (bytes[i] !== close) return false;
    i += 1;
    stack.pop();
    return true;
  };
  const TRUE = [0x74, 0x72, 0x75, 0x65];
  const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
  const NULL = [0x6e, 0x75, 0x6c, 0x6c];

  skipWhitespace();
  if (bytes[i] !== 0x7b) return undefined;
  for (;;) {
    // A value starts here.
    skipWhitespace();
    const c = bytes[i];
    const depth = stack.length;
    let kind: JsonKind;
    if (c === 0x7b) kind = 'object';
    else if (c === 0x5b) kind = 'array';
    else if (c === 0x22) kind = 'string';
    else if (c === 0x2d || isDigit(c)) kind = 'number';
    else kind = 'literal';
    if (depth === 1 && member) {
      member.start = i;
      member.kind = kind;
      if (kind === 'array') member.elements = { count: 0, objects: 0, strings: 0, nulls: 0 };
    } else if (depth === 2 && stack[1] === ARRAY && member?.elements) {
      const elements = member.elements;
      elements.count += 1;
      if (kind === 'object') elements.objects += 1;
      else if (kind === 'string') elements.strings += 1;
      else if (c === 0x6e) elements.nulls += 1;
    }
    let closed = false;
    if (kind === 'object') {
      closed = openContainer(OBJECT, 0x7d);
      if (!closed && !scanKey()) return undefined;
    } else if (kind === 'array') {
      closed = openContainer(ARRAY, 0x5d);
    } else {
      const ok =
        kind === 'string'
          ? scanString()
          : kind === 'number'
            ? scanNumber()
            : c === 0x74
              ? scanLiteral(TRUE)
              : c === 0x66
                ? scanLiteral(FALSE)
                : c === 0x6e
                  ? scanLiteral(NULL)
                  : false;
      if (!ok) return undefined;
      closed = true;
    }
    if (!closed) continue;
    // A value ended: close what it ends, up to the next value.
    for (;;) {
      if (stack.length === 0) {
        skipWhitespace();
        return i === n ? members : undefined;
      }
      if (stack.length === 1 && member && member.end < 0) {
        member.end = i;
        members.push(member);
        member = undefined;
      }
      skipWhitespace();
      const d = bytes[i];
      const top = stack[stack.length - 1];
      if (d === 0x2c) {
        i += 1;
        if (top === OBJECT && !scanKey()) return undefined;
        break;
      }
      if ((top === OBJECT && d === 0x7d) || (top === ARRAY && d === 0x5d)) {
        i += 1;
        stack.pop();
        continue;
      }
      return undefined;
    }
  }
}
