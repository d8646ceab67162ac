import { LeaseLostError } from '../../lib/index';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { counterSuite } from './counter.fixture';

describe('several keys at once, released after commit', () => {
  const prefix = testPrefix(__filename);
  const suite = counterSuite({ redis: redisUrl(), keyPrefix: prefix, leaseMs: 300 });

  it('keeps every key of withLocks inside the caller’s transaction until its COMMIT', async () => {
    await suite.app.counters.reset('from');
    await suite.app.counters.reset('to');
    await suite.app.counters.outer(async () => {
      await suite.app.counters.locks.withLocks(['counter:to', 'counter:from'], async () => {
        await suite.app.counters.readModifyWrite('from');
        await suite.app.counters.readModifyWrite('to');
      });
      suite.app.timeline.add('scope ended');
    });
    const { entries } = suite.app.timeline;
    const commit = entries.indexOf('COMMIT');
    expect(commit).toBeGreaterThan(entries.indexOf('scope ended'));
    expect(entries.indexOf('released counter:from')).toBeGreaterThan(commit);
    expect(entries.indexOf('released counter:to')).toBeGreaterThan(commit);
    expect(await suite.app.counters.value('from')).toBe(1);
    expect(await suite.app.counters.value('to')).toBe(1);
  });

  it('rolls the transaction back and ends in LeaseLostError when one of the keys is lost before COMMIT', async () => {
    await suite.app.counters.reset('lost-a');
    await suite.app.counters.reset('lost-b');
    const call = suite.app.counters.outer(async () => {
      await suite.app.counters.locks.withLocks(['counter:lost-a', 'counter:lost-b'], async (set) => {
        await suite.app.counters.readModifyWrite('lost-a');
        await suite.app.counters.readModifyWrite('lost-b');
        await suite.redis.del(`${prefix}counter:lost-b`);
        if (!set.signal.aborted) await new Promise((resolve) => set.signal.addEventListener('abort', resolve, { once: true }));
      });
    });
    await expect(call).rejects.toBeInstanceOf(LeaseLostError);
    expect(suite.app.timeline.entries).toContain('ROLLBACK');
    expect(suite.app.timeline.entries).not.toContain('COMMIT');
    expect(await suite.app.counters.value('lost-a')).toBe(0);
  });

  it('lets a withLocks already waiting for a key join it when a sibling of the same transaction leaves it to the transaction', async () => {
    await suite.app.counters.reset('shared');
    await suite.app.counters.reset('own');
    const waiting = new Promise<void>((resolve) => {
      const off = suite.app.events.on('contention', (e) => {
        if (e.key !== 'counter:shared') return;
        off();
        resolve();
      });
    });
    await suite.app.counters.outer(async () => {
      await Promise.all([
        // The sibling takes the shared key first and ends its scope only once withLocks waits for it.
        suite.app.counters.locks.withLock('counter:shared', async () => {
          await suite.app.counters.readModifyWrite('shared');
          await waiting;
        }),
        suite.app.counters.locks.withLocks(['counter:own', 'counter:shared'], { waitMs: 5_000 }, async () => {
          await suite.app.counters.readModifyWrite('shared');
          await suite.app.counters.readModifyWrite('own');
        }),
      ]);
    });
    expect(await suite.app.counters.value('shared')).toBe(2);
    expect(await suite.app.counters.value('own')).toBe(1);
    const { entries } = suite.app.timeline;
    expect(entries.filter((entry) => entry === 'released counter:shared')).toHaveLength(1);
    expect(entries.indexOf('released counter:shared')).toBeGreaterThan(entries.indexOf('COMMIT'));
  });
});
