/**
 * Is a Secret Service there, and usable? Asked over the D-Bus session bus in a few small messages before the keyring
 * binding is touched: the binding connects on the main thread and waits forever on a bus that accepts but does not
 * answer, and it reports a locked or missing keyring only when a write fails. This probe has a deadline, sends
 * nothing but read-only calls (Hello, NameHasOwner, ListActivatableNames, ReadAlias, Properties.Get) and never
 * shows a prompt.
 */
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';

export type SecretServiceProbe =
  { ok: true; address: string; locked: boolean | undefined; detail: string } | { ok: false; address: string | undefined; reason: string };

const secretsName = 'org.freedesktop.secrets';
const secretsPath = '/org/freedesktop/secrets';

/**
 * The session bus address libdbus would use: DBUS_SESSION_BUS_ADDRESS, else the systemd user bus at
 * $XDG_RUNTIME_DIR/bus when it exists (then also set in `env`, since the binding reads only the variable).
 */
export function sessionBusAddress(env: NodeJS.ProcessEnv): string | undefined {
  const given = env.DBUS_SESSION_BUS_ADDRESS?.trim();
  if (given) return given;
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && existsSync(join(runtime, 'bus'))) {
    const address = `unix:path=${join(runtime, 'bus')}`;
    env.DBUS_SESSION_BUS_ADDRESS = address;
    return address;
  }
  return undefined;
}

type Target = { path: string } | { host: string; port: number };

function unescapeValue(value: string): string {
  return value.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The first address of a `;`-separated D-Bus address list this probe can reach: unix path, abstract socket, tcp. */
export function parseBusAddress(address: string): Target | undefined {
  for (const entry of address.split(';')) {
    const colon = entry.indexOf(':');
    if (colon === -1) continue;
    const transport = entry.slice(0, colon);
    const params = new Map(
      entry
        .slice(colon + 1)
        .split(',')
        .filter(Boolean)
        .map((pair) => {
          const eq = pair.indexOf('=');
          return [pair.slice(0, eq), unescapeValue(pair.slice(eq + 1))] as const;
        }),
    );
    if (transport === 'unix' && params.get('path')) return { path: params.get('path')! };
    if (transport === 'unix' && params.get('abstract') && process.platform === 'linux') return { path: `\0${params.get('abstract')!}` };
    if (transport === 'tcp' && params.get('port')) return { host: params.get('host') ?? '127.0.0.1', port: Number(params.get('port')) };
  }
  return undefined;
}

// ---- the few bits of the D-Bus wire format the probe needs (little-endian out, either endianness in) ----

class Writer {
  bytes: number[] = [];
  align(n: number): void {
    while (this.bytes.length % n !== 0) this.bytes.push(0);
  }
  byte(v: number): void {
    this.bytes.push(v & 0xff);
  }
  u32(v: number): void {
    this.align(4);
    this.bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  }
  string(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u32(b.length);
    this.bytes.push(...b, 0);
  }
  signature(s: string): void {
    const b = Buffer.from(s, 'ascii');
    this.byte(b.length);
    this.bytes.push(...b, 0);
  }
}

interface Call {
  path: string;
  iface: string;
  member: string;
  destination: string;
  args?: string[];
}

function encodeCall(call: Call, serial: number): Buffer {
  const body = new Writer();
  for (const arg of call.args ?? []) body.string(arg);
  const head = new Writer();
  head.byte(0x6c);
  head.byte(1);
  head.byte(0);
  head.byte(1);
  head.u32(body.bytes.length);
  head.u32(serial);
  const fields = new Writer();
  const field = (code: number, sig: string, value: string) => {
    fields.align(8);
    fields.byte(code);
    fields.signature(sig);
    if (sig === 'g') fields.signature(value);
    else fields.string(value);
  };
  field(1, 'o', call.path);
  field(2, 's', call.iface);
  field(3, 's', call.member);
  field(6, 's', call.destination);
  if (call.args && call.args.length > 0) field(8, 'g', 's'.repeat(call.args.length));
  head.u32(fields.bytes.length);
  const header = Buffer.from([...head.bytes, ...fields.bytes]);
  const padded = Buffer.concat([header, Buffer.alloc((8 - (header.length % 8)) % 8)]);
  return Buffer.concat([padded, Buffer.from(body.bytes)]);
}

interface Message {
  type: number;
  replySerial: number | undefined;
  errorName: string | undefined;
  signature: string;
  body: Buffer;
  little: boolean;
}

class Reader {
  pos = 0;
  constructor(
    readonly buf: Buffer,
    readonly little: boolean,
    readonly base = 0,
  ) {}
  align(n: number): void {
    this.pos += (n - ((this.pos - this.base) % n)) % n;
  }
  byte(): number {
    return this.buf[this.pos++]!;
  }
  u32(): number {
    this.align(4);
    const v = this.little ? this.buf.readUInt32LE(this.pos) : this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  string(): string {
    const n = this.u32();
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n + 1;
    return s;
  }
  signature(): string {
    const n = this.byte();
    const s = this.buf.toString('ascii', this.pos, this.pos + n);
    this.pos += n + 1;
    return s;
  }
  value(sig: string): unknown {
    if (sig === 's' || sig === 'o') return this.string();
    if (sig === 'g') return this.signature();
    if (sig === 'u' || sig === 'b') {
      const v = this.u32();
      return sig === 'b' ? v !== 0 : v;
    }
    if (sig === 'y') return this.byte();
    if (sig === 'v') return this.value(this.signature());
    if (sig === 'as') {
      const length = this.u32();
      const end = this.pos + length;
      const out: string[] = [];
      while (this.pos < end) out.push(this.string());
      return out;
    }
    throw new Error(`unexpected D-Bus type ${sig}`);
  }
}

/** One whole message at the start of `buf`, or undefined when more bytes are needed. */
function decodeMessage(buf: Buffer): { message: Message; size: number } | undefined {
  if (buf.length < 16) return undefined;
  const little = buf[0] === 0x6c;
  const r = new Reader(buf, little);
  r.pos = 1;
  const type = r.byte();
  r.pos = 4;
  const bodyLength = r.u32();
  r.u32();
  const fieldsLength = r.u32();
  const headerEnd = 16 + fieldsLength + ((8 - ((16 + fieldsLength) % 8)) % 8);
  const size = headerEnd + bodyLength;
  if (buf.length < size) return undefined;
  let replySerial: number | undefined;
  let errorName: string | undefined;
  let signature = '';
  while (r.pos < 16 + fieldsLength) {
    r.align(8);
    const code = r.byte();
    const value = r.value('v');
    if (code === 5) replySerial = value as number;
    else if (code === 4) errorName = value as string;
    else if (code === 8) signature = value as string;
  }
  return { message: { type, replySerial, errorName, signature, body: buf.subarray(headerEnd, size), little }, size };
}

function readBody(message: Message): unknown {
  const r = new Reader(message.body, message.little);
  return message.signature === '' ? undefined : r.value(message.signature);
}

class Bus {
  #buffer = Buffer.alloc(0);
  #serial = 0;
  #waiting = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  #authLine: ((line: string) => void) | undefined;
  #authenticated = false;
  #failure: Error | undefined;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.#data(chunk));
    const fail = (error: Error) => {
      this.#failure = error;
      for (const waiter of this.#waiting.values()) waiter.reject(error);
      this.#waiting.clear();
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('the bus closed the connection')));
  }

  #data(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    if (!this.#authenticated) {
      const end = this.#buffer.indexOf('\r\n');
      if (end === -1) return;
      const line = this.#buffer.toString('ascii', 0, end);
      this.#buffer = this.#buffer.subarray(end + 2);
      this.#authLine?.(line);
      return;
    }
    for (;;) {
      const decoded = decodeMessage(this.#buffer);
      if (!decoded) return;
      this.#buffer = this.#buffer.subarray(decoded.size);
      const { message } = decoded;
      if ((message.type === 2 || message.type === 3) && message.replySerial !== undefined) {
        const waiter = this.#waiting.get(message.replySerial);
        this.#waiting.delete(message.replySerial);
        waiter?.resolve(message);
      }
    }
  }

  async authenticate(): Promise<void> {
    const uid = process.getuid?.() ?? 0;
    const line = await new Promise<string>((resolve, reject) => {
      this.#authLine = resolve;
      this.socket.once('close', () => reject(new Error('the bus closed the connection during authentication')));
      this.socket.write(Buffer.concat([Buffer.from([0]), Buffer.from(`AUTH EXTERNAL ${Buffer.from(String(uid)).toString('hex')}\r\n`)]));
    });
    if (!line.startsWith('OK')) throw new Error(`the bus refused the authentication (${line.slice(0, 60)})`);
    this.#authenticated = true;
    this.socket.write('BEGIN\r\n');
  }

  call(call: Call): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    const serial = ++this.#serial;
    return new Promise<Message>((resolve, reject) => {
      this.#waiting.set(serial, { resolve, reject });
      this.socket.write(encodeCall(call, serial));
    }).then((message) => {
      if (message.type === 3) {
        const text = message.signature.startsWith('s') ? String(readBody({ ...message, signature: 's' })) : '';
        throw Object.assign(new Error(`${message.errorName ?? 'error'}${text ? `: ${text}` : ''}`), { dbusName: message.errorName });
      }
      return readBody(message);
    });
  }
}

const busCall = (member: string, args: string[] = []): Call => ({
  path: '/org/freedesktop/DBus',
  iface: 'org.freedesktop.DBus',
  member,
  destination: 'org.freedesktop.DBus',
  args,
});

/**
 * Probes the Secret Service on the session bus within `timeoutMs`: bus reachable, the service running (or startable),
 * its default collection there, and whether that collection is locked. Never throws.
 */
export async function probeSecretService(options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<SecretServiceProbe> {
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 3000;
  const address = sessionBusAddress(env);
  if (!address) return { ok: false, address, reason: 'no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set (usual over SSH, in containers and in CI)' };
  const target = parseBusAddress(address);
  if (!target) return { ok: false, address, reason: `the D-Bus session bus address ${address} names no transport Gantry can reach (unix or tcp)` };
  const shownAddress = 'path' in target ? target.path.replace('\0', '@') : `${target.host}:${target.port}`;
  const socket = connect(target);
  let timer: NodeJS.Timeout | undefined;
  let step = 'connecting to it';
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms while ${step}`)), timeoutMs);
  });
  try {
    const work = (async (): Promise<SecretServiceProbe> => {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      const bus = new Bus(socket);
      step = 'authenticating';
      await bus.authenticate();
      step = 'saying hello';
      await bus.call(busCall('Hello'));
      step = `asking for ${secretsName}`;
      const running = (await bus.call(busCall('NameHasOwner', [secretsName]))) === true;
      if (!running) {
        const activatable = (await bus.call(busCall('ListActivatableNames'))) as string[];
        if (!activatable.includes(secretsName)) {
          return {
            ok: false,
            address,
            reason: `no Secret Service on the D-Bus session bus at ${shownAddress} (no keyring daemon such as gnome-keyring or KeePassXC runs there, and none can be started)`,
          };
        }
      }
      step = `starting or asking ${secretsName} for its default collection`;
      let collection: string;
      try {
        collection = (await bus.call({
          path: secretsPath,
          iface: 'org.freedesktop.Secret.Service',
          member: 'ReadAlias',
          destination: secretsName,
          args: ['default'],
        })) as string;
      } catch (error) {
        return { ok: false, address, reason: `the Secret Service on ${shownAddress} does not answer: ${(error as Error).message}` };
      }
      if (!collection || collection === '/') {
        return {
          ok: true,
          address,
          locked: undefined,
          detail: 'the Secret Service has no default collection yet (writing creates one, which may ask for a password)',
        };
      }
      step = 'asking whether the default collection is locked';
      const locked =
        (await bus.call({
          path: collection,
          iface: 'org.freedesktop.DBus.Properties',
          member: 'Get',
          destination: secretsName,
          args: ['org.freedesktop.Secret.Collection', 'Locked'],
        })) === true;
      return { ok: true, address, locked, detail: `default collection ${collection}${locked ? ' (locked)' : ''}` };
    })();
    return await Promise.race([work, deadline]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code ? `${code}` : (error as Error).message;
    return { ok: false, address, reason: `the D-Bus session bus at ${shownAddress} cannot be used (${why})` };
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
