// For tests whose time goes in waiting in this process (a retry's backoff, a gate's timeout), not in computing or in
// starting processes: each test's work is registered here, the suite's `before` hook starts them all at once, and
// each test awaits its own result and asserts on it alone. The suite takes about as long as its longest wait.
// (Not for timed child processes: started together on a busy machine, their start-ups slow each other down.)

export interface Together {
  /** Registers work; the function returned starts it (once) and resolves with its result. */
  add<T>(start: () => Promise<T>): () => Promise<T>;
  /** Starts every registered work that has not started yet; a failure is left to the test that awaits it. */
  startAll(): void;
}

export function waitingTogether(): Together {
  const registered: Array<() => Promise<unknown>> = [];
  return {
    add<T>(start: () => Promise<T>): () => Promise<T> {
      let running: Promise<T> | undefined;
      const get = () => (running ??= start());
      registered.push(get);
      return get;
    },
    startAll(): void {
      for (const get of registered) get().catch(() => undefined);
    },
  };
}
