import type { LockAdapter, LockHandle } from './lock-adapter.js';

/**
 * Turns a callback-scoped lock API (`withLock`, redlock's `using`, a decorated method) into acquire/release:
 * the acquire resolves when the body starts, and release lets the body finish and waits for the scope to
 * close, so the scope's own release (and any error it reports) is part of the measured release.
 */
/** `acquire` and `run` of a callback-style API, `enter(key, body)` running `body` under the lock of `key`. */
export function scopedCalls(enter: (key: string, body: () => Promise<void>) => Promise<unknown>): Pick<LockAdapter, 'acquire' | 'run'> {
  return {
    acquire: (key) => acquireInScope((body) => enter(key, body)),
    run: async (key) => {
      await enter(key, emptyBody);
    },
  };
}

const emptyBody = async (): Promise<void> => undefined;

export function acquireInScope(enter: (body: () => Promise<void>) => Promise<unknown>): Promise<LockHandle> {
  return new Promise<LockHandle>((resolveAcquired, rejectAcquired) => {
    let entered = false;
    let leave!: () => void;
    const held = new Promise<void>((resolve) => (leave = resolve));
    const scope: Promise<unknown> = enter(async () => {
      entered = true;
      resolveAcquired({
        release: async () => {
          leave();
          await scope;
        },
      });
      await held;
    });
    // Before the body ran, a failure is the acquire's; afterwards release() reports it.
    scope.catch((error: unknown) => {
      if (!entered) rejectAcquired(error);
    });
  });
}
