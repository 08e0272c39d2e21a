/**
 * Liveness and readiness of a long-running server (`gantry hooks serve`, `hooks worker`, `mcp serve`): /healthz says
 * the process answers; /readyz runs each named check (configuration, Redis, the authorization server's keys …) and
 * says which pass. Not ready while a check fails or while the server drains after SIGTERM, so a load balancer stops
 * sending before the process stops taking.
 */
import { redact } from '../redact.js';

export type CheckState = 'ok' | 'failing';

export interface CheckReport {
  name: string;
  state: CheckState;
  /** Why it fails, redacted and without any URL's credentials. */
  detail?: string;
}

export interface ReadinessReport {
  status: 'ready' | 'not-ready' | 'draining';
  checks: CheckReport[];
}

/** A check passes when it resolves, fails when it throws (its message, cleaned, is the detail) or takes over `timeoutMs`. */
export type ReadinessCheck = () => Promise<void> | void;

/** The userinfo of any URL in a message (redis://user:pass@host) goes, whatever redaction knows of it. */
function cleanDetail(message: string): string {
  return redact(message.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1')).slice(0, 300);
}

export class Health {
  private readonly checks = new Map<string, ReadinessCheck>();
  private draining = false;

  constructor(private readonly timeoutMs = 2_000) {}

  /** Adds a named check (run on every /readyz). */
  check(name: string, run: ReadinessCheck): this {
    this.checks.set(name, run);
    return this;
  }

  /** From now on not ready: the server is stopping (SIGTERM) and finishes what it holds. */
  drain(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async report(): Promise<ReadinessReport> {
    const checks = await Promise.all(
      [...this.checks].map(async ([name, run]): Promise<CheckReport> => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(run),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
            }),
          ]);
          return { name, state: 'ok' };
        } catch (error) {
          return { name, state: 'failing', detail: cleanDetail(error instanceof Error ? error.message : String(error)) };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const status = this.draining ? 'draining' : checks.every((c) => c.state === 'ok') ? 'ready' : 'not-ready';
    return { status, checks };
  }
}
