/**
 * The secrets API uses the HTTP method `LIST`, which Node's HTTP parser does not accept. This shim sits between the
 * socket and the HTTP server: it follows request framing (head, Content-Length or chunked body) byte by byte, and turns
 * a `LIST` request line into `GET` with a marker header that only this server instance knows, so the handler can tell
 * a real LIST from a GET. Everything else passes through untouched, and bytes that cannot start a request line (a TLS
 * ClientHello sent to this plain-http port, say) are handed over at once, so Node's parser refuses them with a 400 and
 * closes instead of the client waiting for a head that never ends.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

const MAX_HEAD = 64 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

// RFC 9110 tchar: the bytes a method token is made of.
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHAR[c.charCodeAt(0)] = 1;

/** True once the bytes seen cannot be the start of an HTTP request line (blank lines, then a method token, then SP). */
function cannotStartRequest(buffer: Buffer): boolean {
  let i = 0;
  while (i < buffer.length && (buffer[i] === 0x0d || buffer[i] === 0x0a)) i++;
  for (; i < buffer.length; i++) {
    if (buffer[i] === 0x20) return false;
    if (!TCHAR[buffer[i]!]) return true;
  }
  return false;
}

type State =
  | { kind: 'head'; buffer: Buffer }
  | { kind: 'body'; remaining: number }
  | { kind: 'chunk-size'; line: string }
  | { kind: 'chunk-data'; remaining: number }
  | { kind: 'trailers'; buffer: Buffer }
  | { kind: 'passthrough' };

export class ListMethodShim extends Duplex {
  private state: State = { kind: 'head', buffer: Buffer.alloc(0) };

  constructor(
    readonly socket: Socket,
    private readonly markerHeader: string,
  ) {
    super({ allowHalfOpen: true });
    socket.on('data', (chunk: Buffer) => {
      const out = this.rewrite(chunk);
      if (out.length > 0 && !this.push(out)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (error) => this.destroy(error));
    socket.on('close', () => this.destroy());
    socket.on('timeout', () => this.emit('timeout'));
  }

  // socket-like surface the HTTP server uses
  get remoteAddress() {
    return this.socket.remoteAddress;
  }
  get remotePort() {
    return this.socket.remotePort;
  }
  get localAddress() {
    return this.socket.localAddress;
  }
  get localPort() {
    return this.socket.localPort;
  }
  get encrypted() {
    return (this.socket as Socket & { encrypted?: boolean }).encrypted;
  }
  address() {
    return this.socket.address();
  }
  setTimeout(ms: number, callback?: () => void) {
    this.socket.setTimeout(ms);
    if (callback) this.once('timeout', callback);
    return this;
  }
  setNoDelay(noDelay?: boolean) {
    this.socket.setNoDelay(noDelay);
    return this;
  }
  setKeepAlive(enable?: boolean, delay?: number) {
    this.socket.setKeepAlive(enable, delay);
    return this;
  }
  ref() {
    this.socket.ref();
    return this;
  }
  unref() {
    this.socket.unref();
    return this;
  }

  override _read() {
    this.socket.resume();
  }
  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    this.socket.write(chunk, encoding, callback);
  }
  override _final(callback: (error?: Error | null) => void) {
    this.socket.end(callback);
  }
  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    this.socket.destroy(error ?? undefined);
    callback(error);
  }

  private rewrite(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let data = chunk;
    while (data.length > 0) {
      const state = this.state;
      switch (state.kind) {
        case 'passthrough':
          out.push(data);
          data = Buffer.alloc(0);
          break;
        case 'head': {
          const buffer = Buffer.concat([state.buffer, data]);
          if (cannotStartRequest(buffer)) {
            this.state = { kind: 'passthrough' };
            out.push(buffer);
            data = Buffer.alloc(0);
            break;
          }
          const end = buffer.indexOf(CRLFCRLF);
          if (end < 0) {
            if (buffer.length > MAX_HEAD) {
              this.state = { kind: 'passthrough' };
              out.push(buffer);
            } else {
              this.state = { kind: 'head', buffer };
            }
            data = Buffer.alloc(0);
            break;
          }
          const head = buffer.subarray(0, end + 4);
          data = buffer.subarray(end + 4);
          out.push(this.rewriteHead(head));
          break;
        }
        case 'body': {
          data = passCounted(state, data, out);
          if (state.remaining === 0) this.state = { kind: 'head', buffer: Buffer.alloc(0) };
          break;
        }
        case 'chunk-size': {
          const lineEnd = data.indexOf('\n');
          const piece = lineEnd < 0 ? data : data.subarray(0, lineEnd + 1);
          out.push(piece);
          data = data.subarray(piece.length);
          state.line += piece.toString('latin1');
          if (state.line.length > 1024) {
            this.state = { kind: 'passthrough' };
            break;
          }
          if (lineEnd >= 0) {
            const size = parseInt(state.line.trim().split(';')[0], 16);
            if (Number.isNaN(size)) this.state = { kind: 'passthrough' };
            else if (size === 0) this.state = { kind: 'trailers', buffer: Buffer.alloc(0) };
            else this.state = { kind: 'chunk-data', remaining: size + 2 };
          }
          break;
        }
        case 'chunk-data': {
          data = passCounted(state, data, out);
          if (state.remaining === 0) this.state = { kind: 'chunk-size', line: '' };
          break;
        }
        case 'trailers': {
          const buffer = Buffer.concat([state.buffer, data]);
          const done = buffer.subarray(0, 2).toString('latin1') === '\r\n' ? 2 : buffer.indexOf(CRLFCRLF) >= 0 ? buffer.indexOf(CRLFCRLF) + 4 : -1;
          if (done < 0) {
            if (buffer.length > MAX_HEAD) this.state = { kind: 'passthrough' };
            else this.state = { kind: 'trailers', buffer };
            out.push(data);
            data = Buffer.alloc(0);
            break;
          }
          const consumedFromData = done - state.buffer.length;
          out.push(data.subarray(0, consumedFromData));
          data = data.subarray(consumedFromData);
          this.state = { kind: 'head', buffer: Buffer.alloc(0) };
          break;
        }
      }
    }
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  private rewriteHead(head: Buffer): Buffer {
    let text = head.toString('latin1');
    // tolerate blank lines before a request line, as HTTP/1.1 parsers do
    const lead = /^(\r\n)*/.exec(text)![0].length;
    const lines = text.slice(lead).split('\r\n');
    let contentLength = 0;
    let chunked = false;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') contentLength = Number(value) || 0;
      if (name === 'transfer-encoding' && value.toLowerCase().includes('chunked')) chunked = true;
    }
    if (chunked) this.state = { kind: 'chunk-size', line: '' };
    else if (contentLength > 0) this.state = { kind: 'body', remaining: contentLength };
    else this.state = { kind: 'head', buffer: Buffer.alloc(0) };
    if (lines[0].startsWith('LIST ')) {
      lines[0] = `GET ${lines[0].slice(5)}\r\n${this.markerHeader}: LIST`;
      text = text.slice(0, lead) + lines.join('\r\n');
      return Buffer.from(text, 'latin1');
    }
    return head;
  }
}

/** Passes on what is left of a counted run (a body, a chunk) from `data`; what follows the run is returned. */
function passCounted(run: { remaining: number }, data: Buffer, out: Buffer[]): Buffer {
  const take = Math.min(run.remaining, data.length);
  out.push(data.subarray(0, take));
  run.remaining -= take;
  return data.subarray(take);
}
