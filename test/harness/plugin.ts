// The real @pulumi/pulumi dynamic-provider plugin, started in a consumer project and spoken to over
// gRPC (pulumirpc.ResourceProvider) the way the engine does. The plugin runs in its own process
// group; stopping kills the group, since killing only the first process can leave node running.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { harnessNodeArgs } from './node-flags.js';
import type { PropertyMap } from './secrets.js';

const requireHere = createRequire(import.meta.url);

// The generated stubs are CommonJS without usable type declarations; only what the harness calls is typed.
interface Message {
  [setter: string]: unknown;
}
type MessageClass = new () => Message;
interface StructClass {
  fromJavaScript(value: PropertyMap): unknown;
}
const providerPb = requireHere('@pulumi/pulumi/proto/provider_pb.js') as Record<string, MessageClass>;
const providerGrpc = requireHere('@pulumi/pulumi/proto/provider_grpc_pb.js') as {
  ResourceProviderClient: new (address: string, credentials: grpc.ChannelCredentials) => grpc.Client;
};
const { Struct } = requireHere('google-protobuf/google/protobuf/struct_pb.js') as { Struct: StructClass };

const START_TIMEOUT_MS = 20_000;
const CALL_TIMEOUT_MS = 30_000;
/** The timeout Create, Update and Delete carry, in seconds (what `customTimeouts` would set). The engine puts no
 *  deadline of its own on these calls, so the harness waits that long for them: a step may legitimately take minutes
 *  (a page-analysis gate's Lighthouse runs); Configure, Check, Diff and Read keep CALL_TIMEOUT_MS. */
const STEP_TIMEOUT_S = 300;
const DIFF_NONE = 1;
const DIFF_SOME = 2;

/** Every plugin still running, so an aborted test run does not leave process groups behind. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

export interface PluginOptions {
  consumerDir: string;
  project: string;
  stack: string;
  /** The stack configuration as `namespace:key` → value, secrets still wrapped. */
  config: PropertyMap;
  /** The plain-text configuration for PULUMI_CONFIG, as the language host would set it. */
  plainConfig: Record<string, string>;
  secretConfigKeys: string[];
  env: Record<string, string>;
  /** Receives everything the plugin (and so the provider) writes to stdout and stderr. */
  onOutput: (text: string) => void;
}

export interface DiffResult {
  changes: 'some' | 'none' | 'unknown';
  replaces: string[];
  deleteBeforeReplace: boolean;
}

/** A provider failure as the engine sees it: the gRPC status details carry the provider's message. */
export class ProviderCallError extends Error {
  constructor(
    readonly method: string,
    readonly details: string,
    readonly code: number,
  ) {
    super(details);
    this.name = 'ProviderCallError';
  }
}

export class DynamicProviderPlugin {
  private constructor(
    private readonly child: ChildProcess,
    private readonly client: grpc.Client,
    private readonly exited: Promise<void>,
  ) {}

  static async start(options: PluginOptions): Promise<DynamicProviderPlugin> {
    const entry = path.join(options.consumerDir, 'node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js');
    const child = spawn(process.execPath, [...harnessNodeArgs, entry, '127.0.0.1:0'], {
      cwd: options.consumerDir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...options.env,
        PULUMI_PROJECT: options.project,
        PULUMI_NODEJS_PROJECT: options.project,
        PULUMI_STACK: options.stack,
        PULUMI_NODEJS_STACK: options.stack,
        PULUMI_CONFIG: JSON.stringify(options.plainConfig),
        PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(options.secretConfigKeys),
      },
    });
    running.add(child);
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    exited.then(() => running.delete(child));

    let stdout = '';
    let stderr = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the dynamic-provider plugin printed no port within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      child.stdout!.setEncoding('utf8');
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (text: string) => {
        stderr = (stderr + text).slice(-2000);
        options.onOutput(text);
      });
      const onStdout = (text: string): void => {
        stdout += text;
        const newline = stdout.indexOf('\n');
        if (newline < 0) return;
        child.stdout!.off('data', onStdout);
        child.stdout!.on('data', (more: string) => options.onOutput(more));
        if (stdout.length > newline + 1) options.onOutput(stdout.slice(newline + 1));
        clearTimeout(timer);
        const port = Number(stdout.slice(0, newline).trim());
        if (Number.isInteger(port) && port > 0) resolve(port);
        else reject(new Error(`the dynamic-provider plugin's first line is not a port: ${JSON.stringify(stdout.slice(0, newline))}`));
      };
      child.stdout!.on('data', onStdout);
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the dynamic-provider plugin exited (${signal ?? code}) before printing its port`));
      });
    }).catch((error: Error) => {
      killGroup(child, 'SIGKILL');
      throw new Error(`${error.message}${stderr ? `; it printed:\n${stderr}` : ''}`);
    });

    const client = new providerGrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const plugin = new DynamicProviderPlugin(child, client, exited);
    await plugin.configure(options.config);
    return plugin;
  }

  /** The engine calls Configure once, before the first Check, with the whole stack configuration. */
  private async configure(config: PropertyMap): Promise<void> {
    const request = message('ConfigureRequest', { setArgs: struct(config) });
    const variables = (request.getVariablesMap as () => Map<string, string>)();
    for (const [key, value] of Object.entries(config)) {
      if (typeof value === 'string') variables.set(key, value);
    }
    const response = await this.call('configure', request);
    if (call<boolean>(response, 'getAcceptsecrets')) {
      throw new Error('the dynamic-provider plugin now accepts secrets: the harness must stop stripping them');
    }
  }

  async check(urn: string, olds: PropertyMap, news: PropertyMap): Promise<{ inputs: PropertyMap; failures: Array<{ property: string; reason: string }> }> {
    const response = await this.call('check', message('CheckRequest', { setUrn: urn, setOlds: struct(olds), setNews: struct(news) }));
    const failures = call<Message[]>(response, 'getFailuresList').map((failure) => ({
      property: call<string>(failure, 'getProperty'),
      reason: call<string>(failure, 'getReason'),
    }));
    return { inputs: toJavaScript(call(response, 'getInputs')), failures };
  }

  async diff(urn: string, id: string, olds: PropertyMap, news: PropertyMap, oldInputs: PropertyMap): Promise<DiffResult> {
    const response = await this.call(
      'diff',
      message('DiffRequest', { setUrn: urn, setId: id, setOlds: struct(olds), setNews: struct(news), setOldInputs: struct(oldInputs) }),
    );
    const changes = call<number>(response, 'getChanges');
    return {
      changes: changes === DIFF_SOME ? 'some' : changes === DIFF_NONE ? 'none' : 'unknown',
      replaces: call<string[]>(response, 'getReplacesList'),
      deleteBeforeReplace: call<boolean>(response, 'getDeletebeforereplace'),
    };
  }

  async create(urn: string, properties: PropertyMap): Promise<{ id: string; outputs: PropertyMap }> {
    const response = await this.call(
      'create',
      message('CreateRequest', { setUrn: urn, setProperties: struct(properties), setTimeout: STEP_TIMEOUT_S }),
      STEP_TIMEOUT_S * 1000,
    );
    return { id: call<string>(response, 'getId'), outputs: toJavaScript(call(response, 'getProperties')) };
  }

  async read(urn: string, id: string, properties: PropertyMap, inputs: PropertyMap): Promise<{ id: string; outputs: PropertyMap; inputs?: PropertyMap }> {
    const response = await this.call('read', message('ReadRequest', { setUrn: urn, setId: id, setProperties: struct(properties), setInputs: struct(inputs) }));
    const newInputs = call<unknown>(response, 'getInputs');
    return {
      id: call<string>(response, 'getId'),
      outputs: toJavaScript(call(response, 'getProperties')),
      ...(newInputs ? { inputs: toJavaScript(newInputs) } : {}),
    };
  }

  async update(urn: string, id: string, olds: PropertyMap, news: PropertyMap, oldInputs: PropertyMap): Promise<PropertyMap> {
    const response = await this.call(
      'update',
      message('UpdateRequest', {
        setUrn: urn,
        setId: id,
        setOlds: struct(olds),
        setNews: struct(news),
        setOldInputs: struct(oldInputs),
        setTimeout: STEP_TIMEOUT_S,
      }),
      STEP_TIMEOUT_S * 1000,
    );
    return toJavaScript(call(response, 'getProperties'));
  }

  async delete(urn: string, id: string, properties: PropertyMap, oldInputs: PropertyMap): Promise<void> {
    await this.call(
      'delete',
      message('DeleteRequest', { setUrn: urn, setId: id, setProperties: struct(properties), setOldInputs: struct(oldInputs), setTimeout: STEP_TIMEOUT_S }),
      STEP_TIMEOUT_S * 1000,
    );
  }

  /** Closes the channel, kills the plugin's process group and waits until its output is drained. */
  async stop(): Promise<void> {
    this.client.close();
    killGroup(this.child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(this.child, 'SIGKILL'), 2_000);
    await this.exited;
    clearTimeout(timer);
  }

  private call(method: string, request: Message, timeoutMs = CALL_TIMEOUT_MS): Promise<Message> {
    const invoke = (this.client as unknown as Record<string, (...args: unknown[]) => void>)[method]!.bind(this.client);
    return new Promise((resolve, reject) => {
      invoke(request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (error: grpc.ServiceError | null, response: Message) => {
        if (error) reject(new ProviderCallError(method, error.details || error.message, error.code));
        else resolve(response);
      });
    });
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

function message(type: string, fields: Record<string, unknown>): Message {
  const instance = new providerPb[type]!();
  for (const [setter, value] of Object.entries(fields)) call(instance, setter, value);
  return instance;
}

function call<T>(target: Message, method: string, ...args: unknown[]): T {
  return (target[method] as (...a: unknown[]) => T).apply(target, args);
}

/** Protobuf structs cannot hold `undefined`; the engine never sends it either. */
function struct(map: PropertyMap): unknown {
  return Struct.fromJavaScript(JSON.parse(JSON.stringify(map)) as PropertyMap);
}

function toJavaScript(value: unknown): PropertyMap {
  return value ? call<PropertyMap>(value as Message, 'toJavaScript') : {};
}
