import { expectExactIncrements } from './increment-workers';
import { RedlockMasters } from './redlock-test-support';

// Three processes start (each transpiles the library) and make 150 grants of two phases on three masters:
// on a loaded box that can pass the default minute.
jest.setTimeout(180_000);

describe('mutual exclusion across processes on Redlock', () => {
  let masters: RedlockMasters;
  beforeAll(async () => {
    masters = await RedlockMasters.start(3);
  });
  afterAll(() => masters.stop());

  it('loses no increment when 3 processes do read-modify-write under one Redlock lock, each write under a higher fencing token', () =>
    expectExactIncrements({
      file: __filename,
      env: { LOCK_TEST_STORE: 'redlock', REDLOCK_MASTERS: masters.urls.join(','), LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ leaseMs: 10_000 }) },
      processes: 3,
      loopsPerProcess: 2,
      iterations: 25,
    }));
});
