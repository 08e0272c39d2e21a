// MCP's logging capability (logging/setLevel, notifications/message) on a stateless server. Over HTTP each request
// gets a server of its own (no session id), so the level a caller set is kept here, by caller — the token's client
// and subject, or one anonymous caller without authorization — for the later calls of the same caller.
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';

const severity: Record<LoggingLevel, number> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };

/** What a caller hears when it set no level: the spec leaves it to the server; debug lines are for the server's log. */
export const DEFAULT_CLIENT_LOG_LEVEL: LoggingLevel = 'info';

export interface LogLevels {
  get(caller: string): LoggingLevel;
  set(caller: string, level: LoggingLevel): void;
}

/** Levels for up to `capacity` callers; the one not heard from longest is forgotten first (it falls back to the default). */
export function createLogLevels(capacity = 1_000): LogLevels {
  const levels = new Map<string, LoggingLevel>();
  return {
    get: (caller) => levels.get(caller) ?? DEFAULT_CLIENT_LOG_LEVEL,
    set(caller, level) {
      levels.delete(caller);
      levels.set(caller, level);
      if (levels.size > capacity) levels.delete(levels.keys().next().value!);
    },
  };
}

/** Whether a message at `level` reaches a caller who asked for `threshold` and above. */
export function heard(level: LoggingLevel, threshold: LoggingLevel): boolean {
  return severity[level] >= severity[threshold];
}
