import { LockUpgradeError } from '../../lib/index';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { counterSuite } from './counter.fixture';

describe('read/write locks and semaphores are released after the COMMIT', () => {
  const prefix = testPrefix(__filename);
  const suite = counterSuite({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 5_000 });

  it('holds a write lease until the transaction commits, and runs a read of the key in it under that lease', async () => {
    const { counters, timeline } = suite.app;
    await counters.reset('rw');
    await counters.outer(async () => {
      const writer = await counters.locks.withLock('counter:rw', { mode: 'write' }, async (lease) => {
        await counters.readModifyWrite('rw');
        return lease;
      });
      // The scope ended, the transaction goes on: it owns the key, a read in it joins the write lease.
      expect(await counters.locks.withLock('counter:rw', { mode: 'read' }, (lease) => lease)).toBe(writer);
      expect(writer.held).toBe(true);
    });
    const { entries } = timeline;
    expect(entries.filter((entry) => entry === 'released counter:rw')).toHaveLength(1);
    expect(entries.lastIndexOf('released counter:rw')).toBeGreaterThan(entries.lastIndexOf('COMMIT'));
    expect(await counters.value('rw')).toBe(1);
  });

  it('holds a permit until the COMMIT, and refuses a write of a key the transaction holds for reading', async () => {
    const { counters, timeline } = suite.app;
    await counters.reset('sem');
    await counters.outer(async () => {
      await counters.locks.withLock('counter:sem', { permits: 2 }, () => counters.readModifyWrite('sem'));
      await counters.locks.withLock('counter:doc', { mode: 'read' }, () => undefined);
      await expect(counters.locks.withLock('counter:doc', { mode: 'write' }, () => 'ran')).rejects.toBeInstanceOf(LockUpgradeError);
    });
    const { entries } = timeline;
    expect(entries.lastIndexOf('released counter:sem')).toBeGreaterThan(entries.lastIndexOf('COMMIT'));
    expect(entries.lastIndexOf('released counter:doc')).toBeGreaterThan(entries.lastIndexOf('COMMIT'));
  });
});
