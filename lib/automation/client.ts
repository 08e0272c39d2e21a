import { expectFunction, expectObject } from '../arguments.js';
import { createHttpClient, noRetry, type HttpClient, type RetryPolicy } from '../http/index.js';
import { getLogger, type Logger } from '../log.js';
import { isWebDriverError } from './errors.js';
import { commandValue, interpretAnswer, parseNewSession, type CommandContext, type RemoteAnswer } from './protocol.js';

/** W3C WebDriver's web element identifier (§12.1). */
const elementKey = 'element-6066-11e4-a52e-4f735466cecf';

export type HttpMethod = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH' | 'HEAD' | 'OPTIONS';

/** W3C capabilities request (https://www.w3.org/TR/webdriver2/#processing-capabilities). */
export interface CapabilitiesRequest {
  alwaysMatch?: Record<string, unknown>;
  firstMatch?: Record<string, unknown>[];
}

export interface DriverStatus {
  ready: boolean;
  message: string;
  raw: Record<string, unknown>;
}

export interface WebDriverClientOptions {
  /** The remote end, e.g. `http://127.0.0.1:9515`. */
  url: string;
  /** How long one command may take before its answer, in ms (navigation waits for the page load). Default 120 s. */
  commandTimeoutMs?: number;
  logger?: Logger;
}

export interface WebDriverClient {
  readonly url: string;
  /** `GET /status`: whether the remote end can create new sessions. */
  status(options?: { retry?: RetryPolicy; signal?: AbortSignal; timeoutMs?: number }): Promise<DriverStatus>;
  /**
   * `POST /session` with a JSON object body (AUT-EP-NEW-SESSION). `desiredCapabilities` is sent beside the W3C
   * `capabilities` only when given, for remote ends that still speak the legacy protocol.
   */
  newSession(capabilities: CapabilitiesRequest, options?: { desiredCapabilities?: Record<string, unknown> }): Promise<Session>;
  /** Any command: the raw answer interpreted, errors typed by their W3C code. */
  command(method: HttpMethod, path: string, body?: Record<string, unknown>): Promise<unknown>;
  /** Sessions created through this client and not deleted yet. */
  openSessions(): Session[];
  close(): void;
}

/** A session on the remote end. Commands are W3C endpoints under `/session/{id}`. */
export class Session {
  private ended = false;

  constructor(
    private readonly client: WebDriverClient,
    readonly id: string,
    readonly capabilities: Record<string, unknown>,
    /** The new-session response shape the remote end used. */
    readonly shape: 'w3c' | 'legacy',
    private readonly onEnd: (session: Session) => void,
  ) {}

  get path(): string {
    return `/session/${encodeURIComponent(this.id)}`;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** `POST /session/{id}/url`: navigates and waits for the page load (per the session's page-load strategy). */
  async navigateTo(url: string): Promise<void> {
    await this.client.command('POST', `${this.path}/url`, { url });
  }

  /** `GET /session/{id}/title`. */
  async getTitle(): Promise<string> {
    return String(await this.client.command('GET', `${this.path}/title`));
  }

  /** `GET /session/{id}/url`. */
  async getCurrentUrl(): Promise<string> {
    return String(await this.client.command('GET', `${this.path}/url`));
  }

  /** `POST /session/{id}/timeouts`, in ms. */
  async setTimeouts(timeouts: { pageLoad?: number; script?: number; implicit?: number }): Promise<void> {
    await this.client.command('POST', `${this.path}/timeouts`, { ...timeouts });
  }

  /** `POST /session/{id}/execute/sync`: runs a function body in the page and returns its JSON-clonable result. */
  async executeScript(script: string, args: unknown[] = []): Promise<unknown> {
    return this.client.command('POST', `${this.path}/execute/sync`, { script, args });
  }

  /** `POST /session/{id}/element` with a CSS selector: the element's reference (W3C's element identifier key). */
  async findElement(selector: string): Promise<string> {
    const found = (await this.client.command('POST', `${this.path}/element`, { using: 'css selector', value: selector })) as Record<string, unknown> | null;
    const reference = found?.[elementKey] ?? found?.ELEMENT;
    if (typeof reference !== 'string') throw new TypeError(`the remote end found ${selector} but gave no element reference`);
    return reference;
  }

  /** `POST /session/{id}/element/{element}/value`: types `text` into the element. */
  async sendKeys(element: string, text: string): Promise<void> {
    await this.client.command('POST', `${this.path}/element/${encodeURIComponent(element)}/value`, { text });
  }

  /** `POST /session/{id}/element/{element}/click`. */
  async click(element: string): Promise<void> {
    await this.client.command('POST', `${this.path}/element/${encodeURIComponent(element)}/click`, {});
  }

  /**
   * `DELETE /session/{id}/cookie` (W3C WebDriver §14.5, Delete All Cookies): removes the cookies of the current
   * document's host — every port of it — so a page opened next in this session starts signed out there.
   */
  async deleteAllCookies(): Promise<void> {
    await this.client.command('DELETE', `${this.path}/cookie`);
  }

  /**
   * `DELETE /session/{id}` (AUT-EP-END-SESSION): accepts `{}` and `{value: null}`. A session the remote end no
   * longer knows (`invalid session id`) counts as ended. Deleting twice is a no-op.
   */
  async delete(): Promise<void> {
    if (this.ended) return;
    try {
      await this.client.command('DELETE', this.path);
    } catch (error) {
      if (!isWebDriverError(error, 'invalid session id')) throw error;
    } finally {
      this.ended = true;
      this.onEnd(this);
    }
  }
}

/** A typed client for a W3C WebDriver remote end, on the one HTTP core. */
export function createWebDriverClient(options: WebDriverClientOptions): WebDriverClient {
  expectObject('createWebDriverClient', 'options', options, 'an object with the url of a WebDriver server');
  const logger = options.logger ?? getLogger();
  const http: HttpClient = createHttpClient({
    baseUrl: options.url,
    // Commands are not idempotent (a retried POST /session would start a second browser): never retried.
    retry: noRetry,
    timeouts: { connect: 5_000, response: options.commandTimeoutMs ?? 120_000 },
    logger,
    maxBodyBytes: 16 * 1024 * 1024,
  });
  const open = new Set<Session>();

  async function send(
    method: HttpMethod,
    path: string,
    body?: Record<string, unknown>,
    extra: { retry?: RetryPolicy; signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<{ answer: RemoteAnswer; context: CommandContext }> {
    const context: CommandContext = { method, path };
    logger.debug(`webdriver: ${method} ${path}`);
    const response = await http.request<string>({
      method,
      url: path,
      // W3C: a POST carries a JSON object even when the command takes no parameters.
      ...(body !== undefined ? { json: body } : method === 'POST' ? { json: {} } : {}),
      headers: { accept: 'application/json' },
      responseType: 'text',
      accept: () => true,
      ...(extra.retry ? { retry: extra.retry } : {}),
      ...(extra.signal ? { signal: extra.signal } : {}),
      ...(extra.timeoutMs ? { timeouts: { response: extra.timeoutMs } } : {}),
    });
    return { answer: { status: response.status, text: response.body }, context };
  }

  const client: WebDriverClient = {
    url: options.url,

    async status(extra = {}) {
      const { answer, context } = await send('GET', '/status', undefined, extra);
      const body = interpretAnswer(answer, context);
      const value = (typeof body.value === 'object' && body.value !== null ? body.value : {}) as Record<string, unknown>;
      return { ready: value.ready === true, message: typeof value.message === 'string' ? value.message : '', raw: value };
    },

    async newSession(capabilities, sessionOptions = {}) {
      const body: Record<string, unknown> = { capabilities: { alwaysMatch: {}, firstMatch: [{}], ...capabilities } };
      if (sessionOptions.desiredCapabilities) body.desiredCapabilities = sessionOptions.desiredCapabilities;
      const { answer, context } = await send('POST', '/session', body);
      const created = parseNewSession(answer, context);
      const session = new Session(client, created.sessionId, created.capabilities, created.shape, (s) => open.delete(s));
      open.add(session);
      return session;
    },

    async command(method, path, body) {
      const { answer, context } = await send(method, path, body);
      return commandValue(answer, context);
    },

    openSessions: () => [...open],

    close() {
      http.close();
    },
  };
  return client;
}

/** Runs `work` in a new session and always deletes the session afterwards, also when `work` throws. */
export async function withSession<T>(
  client: WebDriverClient,
  capabilities: CapabilitiesRequest,
  work: (session: Session) => Promise<T>,
  logger: Logger = getLogger(),
): Promise<T> {
  expectObject('withSession', 'client', client, 'a WebDriverClient from createWebDriverClient');
  expectFunction('withSession', 'client.newSession', client.newSession, 'a method (client must come from createWebDriverClient)');
  expectFunction('withSession', 'work', work, 'a function (session) => Promise');
  const session = await client.newSession(capabilities);
  let result: T;
  try {
    result = await work(session);
  } catch (error) {
    // The work's own error matters more than a failed clean-up, which is only logged.
    await session.delete().catch((deleteError: unknown) => {
      logger.warn(`could not delete WebDriver session ${session.id}: ${deleteError instanceof Error ? deleteError.message : String(deleteError)}`);
    });
    throw error;
  }
  await session.delete();
  return result;
}
