/**
 * The end of a Redis outage, said once. The Redis-backed webhook queue and platform budget store warn when Redis stops
 * answering; `up()` says, at the same level, that it answers again — once per outage, whichever of their connections
 * or commands notices first — so that a reader of the default log does not see Redis go down and never come back.
 */
import type { Logger } from './log.js';

export interface RedisOutage {
  /** A command or connection failed: Redis is down until `up()`. */
  down(): void;
  /** A command or connection succeeded: logs `<what> answers again` when Redis was down, once; true when it did. */
  up(): boolean;
}

export function redisOutage(logger: Logger, what: string): RedisOutage {
  let down = false;
  return {
    down() {
      down = true;
    },
    up() {
      if (!down) return false;
      down = false;
      logger.warn(`${what} answers again`);
      return true;
    },
  };
}
