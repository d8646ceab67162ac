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
});
