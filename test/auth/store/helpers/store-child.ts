/**
 * Runs token-store operations in a process of its own and prints the outcome as one JSON line: the keyring binding
 * (through libdbus) takes the D-Bus session bus from DBUS_SESSION_BUS_ADDRESS once per process, so each keyring
 * scenario gets a fresh process with the peer's environment. The script comes as JSON in argv[2]; every log line
 * the library writes is captured and printed too, so the parent can search it for canary tokens.
 */
import { inspect } from 'node:util';
import { setLogger } from '../../../../lib/log.js';
import { SecretsClient } from '../../../../lib/secrets/index.js';
import {
  dropAccountLogins,
  listProfiles,
  openStoreFor,
  openTokenStore,
  saveLogin,
  type AccountRef,
  type OpenTokenStoreOptions,
  type ProfileKey,
  type StoredLogin,
  type TokenStore,
} from '../../../../lib/auth/store/index.js';

export type Op =
  | { op: 'open'; spec?: string }
  | { op: 'write'; login: StoredLogin }
  | { op: 'save'; login: StoredLogin }
  | { op: 'read'; key: ProfileKey }
  | { op: 'readIndexed'; key: ProfileKey }
  | { op: 'delete'; key: ProfileKey }
  | { op: 'drop'; account: AccountRef }
  | { op: 'list' };

export interface Script {
  options: Omit<OpenTokenStoreOptions, 'kv'> & { kvAddress?: string; kvToken?: string };
  ops: Op[];
}

export type Outcome =
  { ok: true; value: unknown } | { ok: false; error: { message: string; hint?: string; cliHint?: string; code?: string; exitCode?: number } };

const script = JSON.parse(process.argv[2] ?? '{}') as Script;
const logs: string[] = [];
setLogger({ debug: (m) => logs.push(m), info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) });
const { kvAddress, kvToken, ...rest } = script.options;
const options: OpenTokenStoreOptions = {
  ...rest,
  ...(kvAddress
    ? { kv: async () => new SecretsClient({ address: kvAddress, token: kvToken, sources: { env: {}, pulumi: undefined } }) }
    : { kv: async () => undefined }),
};

let store: TokenStore | undefined;
const outcomes: Outcome[] = [];
for (const op of script.ops) {
  try {
    let value: unknown;
    if (op.op === 'open') {
      const opened = await openTokenStore(op.spec, options);
      store = opened.store;
      value = { kind: store.kind, spec: store.spec, location: store.location, fallbackReason: opened.fallbackReason, warning: opened.warning };
    } else if (op.op === 'write') {
      await store!.write(op.login);
    } else if (op.op === 'save') {
      value = await saveLogin(store!, op.login, options);
    } else if (op.op === 'read') {
      const login = await store!.read(op.key);
      // The login as it is (to compare), and as logging shows it (to search for canaries).
      value = login
        ? {
            login: { ...login, tokens: { ...login.tokens } },
            json: JSON.stringify(login),
            inspected: inspect(login, { depth: 5 }),
            describe: store!.describe(op.key),
          }
        : null;
    } else if (op.op === 'readIndexed') {
      const opened = await openStoreFor(op.key, options);
      const login = opened ? await opened.store.read(op.key) : undefined;
      value = opened ? { kind: opened.store.kind, entry: opened.entry, found: login !== undefined } : null;
    } else if (op.op === 'delete') {
      value = await store!.delete(op.key);
    } else if (op.op === 'drop') {
      value = await dropAccountLogins(op.account, options);
    } else {
      value = await listProfiles(options);
    }
    outcomes.push({ ok: true, value: value ?? null });
  } catch (error) {
    const e = error as { message: string; hint?: string; cliHint?: string; code?: string; exitCode?: number };
    outcomes.push({
      ok: false,
      error: {
        message: e.message,
        ...(e.hint ? { hint: e.hint } : {}),
        ...(e.cliHint ? { cliHint: e.cliHint } : {}),
        ...(e.code ? { code: e.code } : {}),
        ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}),
      },
    });
  }
}
process.stdout.write(`${JSON.stringify({ outcomes, logs })}\n`);
