interface KeyQueue {
  /** Settles when every waiter that entered so far has left. */
  tail: Promise<void>;
  waiting: number;
}

/**
 * Waiters of one application for the same key form a FIFO, and only the head talks to the store (the
 * waiting that stores with a queue of their own do in the store instead, see wait-strategy.ts). Without
 * it every release wakes every local waiter into an acquire attempt (one wins, the rest are wasted
 * round trips), and a caller that just released can grab the key again ahead of those already waiting.
 */
export class LocalFifo {
  private readonly queues = new Map<string, KeyQueue>();

  /** Whether some local caller waits for `key` (or is the one talking to the store for it). */
  busy(key: string): boolean {
    return this.queues.has(key);
  }

  /**
   * Resolves once every earlier local waiter for `key` has left, with the function that lets the next
   * one in; resolves `undefined` if `deadline` passes first. Rejects if `signal` aborts meanwhile.
   */
  async enter(key: string, deadline: number, signal?: AbortSignal): Promise<(() => void) | undefined> {
    const existing = this.queues.get(key);
    const queue = existing ?? { tail: Promise.resolve(), waiting: 0 };
    this.queues.set(key, queue);
    const previous = queue.tail;
    let leave!: () => void;
    const left = new Promise<void>((resolve) => (leave = resolve));
    // The next waiter goes after the previous one and us, so giving up early never lets it jump the queue.
    queue.tail = previous.then(() => left);
    queue.waiting++;
    const done = (): void => {
      leave();
      if (--queue.waiting === 0 && this.queues.get(key) === queue) this.queues.delete(key);
    };
    // Nobody local is waiting (the common, uncontended case): no timer, no extra promise turn.
    if (!existing) return done;
    try {
      if (await turnBefore(previous, deadline, signal)) return done;
    } catch (error) {
      done();
      throw error;
    }
    done();
    return undefined;
  }
}

function turnBefore(previous: Promise<void>, deadline: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const finish = (turn: boolean, error?: unknown): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) resolve(turn);
      else reject(error);
    };
    const onAbort = (): void => finish(false, signal!.reason);
    const timer = setTimeout(() => finish(false), Math.max(0, deadline - Date.now()));
    signal?.addEventListener('abort', onAbort);
    void previous.then(() => finish(true));
  });
}
