import { LeaseLostError, type Lease } from '../../lib/index';
import { createLockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';

/**
 * On Node 20 and 22 an AsyncLocalStorage that ran once stays enabled until `disable()`: every promise the
 * process creates afterwards gets a slot for it (a symbol property named `kResourceStore`) and pays for it,
 * about 40 ns each and more as they pile up. Node 24 and later keep context elsewhere (AsyncContextFrame):
 * there promises carry no such slot and this count stays 0 whatever happens.
 */
function contextSlotsOnANewPromise(): number {
  return Object.getOwnPropertySymbols(Promise.resolve()).filter((symbol) => symbol.description === 'kResourceStore').length;
}

describe('a closed application leaves no async context behind', () => {
  const prefix = testPrefix(__filename);

  it('gives back the async context of its scopes at app.close(), so apps opened and closed in one process do not slow every promise', async () => {
    const before = contextSlotsOnANewPromise();
    for (let round = 0; round < 3; round++) {
      const app = await createLockApp({ store: 'memory', keyPrefix: `${prefix}${round}:` });
      // Both kinds of scope: one key (its lease context) and several (its lease set context).
      await app.locks.withLock('one', async () => undefined);
      await app.locks.withLocks(['a', 'b'], async () => undefined);
      await app.close();
    }
    expect(contextSlotsOnANewPromise()).toBe(before);
  });

  it('keeps the context of a scope still running past the shutdown grace until it ends: it sees its lease lost, not no lease', async () => {
    const before = contextSlotsOnANewPromise();
    const app = await createLockApp({ store: 'memory', keyPrefix: `${prefix}straggler:`, shutdownGraceMs: 0 });
    let entered!: () => void;
    const inScope = new Promise<void>((resolve) => (entered = resolve));
    let goOn!: () => void;
    const closed = new Promise<void>((resolve) => (goOn = resolve));
    let seen: Lease | undefined;
    const call = app.locks
      .withLock('straggler', async () => {
        entered();
        await closed;
        // The documented check of long work: it must still find the lease, and find it lost.
        seen = app.locks.current();
        seen?.signal.throwIfAborted();
        return 'went on';
      })
      .catch((error: unknown) => error);
    await inScope;
    await app.close();
    goOn();
    const outcome = await call;
    expect(seen).toBeDefined();
    expect(seen!.signal.aborted).toBe(true);
    expect(outcome).toBeInstanceOf(LeaseLostError);
    // Given back once the last scope ended.
    expect(contextSlotsOnANewPromise()).toBe(before);
  });
});
