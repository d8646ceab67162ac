import { testPrefix } from '../support/test-prefix';
import { describeLockStoreContract } from './lock-store.contract';
import { RedlockMasters, redlockStore } from './redlock-test-support';

// The shared contract, unchanged, on the smallest quorum (2 of 3) and on the next (3 of 5).
for (const count of [3, 5]) {
  describeLockStoreContract(`RedlockLockStore on ${count} masters`, async () => {
    const masters = await RedlockMasters.start(count);
    // Two phases on every master must fit in the short lease's validity even on a loaded box.
    return { store: redlockStore(masters, testPrefix(__filename)), cleanup: () => masters.stop(), shortLeaseMs: 500 };
  });
}
