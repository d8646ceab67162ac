import { join } from 'node:path';
import { LeaseLostError, type Lease } from '../../lib/index';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import { createLockApp, type LockApp } from '../support/lock-app';
import { RedisFencedResource } from '../support/redis-fenced-resource';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { RedlockMasters } from '../stores/redlock-test-support';
import { DrillTimeline, type TimelineEntry } from './drill-timeline';
import { holdUntilLost } from './held-until-lost';
import { FakedClock, findLibfaketime, until } from './redlock-faked-clock';

const LEASE_MS = 3_000;
const KEY = 'ledger';
const library = findLibfaketime();
// Skipped only on a developer's machine without libfaketime; under CI=true a missing library fails the drill.
const ci = process.env.CI === 'true';
if (!library && !ci) console.warn('redlock clock-jump drill skipped: libfaketime is not installed (apt-get install faketime; .ci/run installs it)');
const describeWithFaketime = library || ci ? describe : describe.skip;

/**
 * Drill "a master's clock jumps" (the published critique of Redlock: an NTP step, an operator's `date -s`).
 * Three private masters, 0 and 1 under libfaketime (see redlock-faked-clock.ts for how and why so), each
 * case on fresh masters, clocks at +0. What each case proves, as measured here and written in
 * docs/redlock.md:
 * - one master jumps forward past the lease: its copy expires early, and that alone grants nobody else
 *   (a contender gets that master only, 1 of 3, and gives it back); the holder renews on the other two;
 * - a second master's copy gone too (a second jump, or a restart empty): a second holder is granted while
 *   the first still runs (asserted, so that a change is seen), with a higher fencing token; the first
 *   learns at its next renewal ('rejected', a majority says the key is not its own), and its late fenced
 *   write is refused;
 * - a master jumps backward: a copy nobody renews (a crashed holder's) outlives its lease there by the
 *   jump; the next holders are granted on the other two, tokens keep rising, two never hold at once.
 */
describeWithFaketime("drill: a Redlock master's clock jumps", () => {
  const prefix = testPrefix(__filename);
  const lockKey = `${prefix}${KEY}`;
  let clocks: FakedClock[];
  let masters: RedlockMasters;
  let a: LockApp;
  let b: LockApp;
  let timeline: DrillTimeline;

  beforeEach(async () => {
    if (!library) throw new Error('libfaketime is not installed (apt-get install faketime): CI=true requires this drill to run');
    clocks = [new FakedClock(library), new FakedClock(library)];
    masters = await RedlockMasters.start(3, (i) => clocks[i]?.env);
    const options = { store: 'redlock' as const, redlock: { masters: masters.urls }, keyPrefix: prefix, leaseMs: LEASE_MS };
    a = await createLockApp({ ...options, holder: 'a' });
    b = await createLockApp({ ...options, holder: 'b' });
    timeline = new DrillTimeline();
    timeline.follow('a', a);
    timeline.follow('b', b);
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
    await masters?.stop();
    for (const clock of clocks ?? []) clock.remove();
  });

  /** Which masters hold a copy of the key (a read expires a copy whose deadline the server's clock passed). */
  const copies = (): Promise<number[]> => Promise.all([0, 1, 2].map((i) => masters.ask(i, (redis) => redis.exists(lockKey))));

  /** Moves master `index`'s clock and waits until its TIME shows it. */
  async function jump(index: number, seconds: number): Promise<TimelineEntry> {
    const marker = timeline.marker(`master ${index}'s clock jumps ${seconds > 0 ? '+' : ''}${seconds} s`);
    clocks[index]!.jump(seconds);
    await until(async () => {
      const [s, us] = await masters.ask(index, (redis) => redis.time());
      return Math.abs(Number(s) * 1_000 + Number(us) / 1_000 - Date.now() - seconds * 1_000) < 1_000;
    }, `master ${index}'s TIME is ${seconds} s off`);
    return marker;
  }

  it('one master jumps forward past the lease: nobody else is granted, and the holder renews on the other two', async () => {
    let leave!: () => void;
    const leaving = new Promise<void>((resolve) => (leave = resolve));
    let entered!: (lease: Lease) => void;
    const inside = new Promise<Lease>((resolve) => (entered = resolve));
    const holding = a.locks.withLock(KEY, (lease) =>
      timeline.section('a', lease, () => {
        entered(lease);
        return leaving;
      }),
    );
    const lease = await inside;
    expect(await copies()).toEqual([1, 1, 1]);

    const jumped = await jump(0, 30);
    expect(await copies()).toEqual([0, 1, 1]);
    expect(await b.locks.tryAcquire(KEY)).toBeNull();
    // What b got from master 0 (1 of 3) was given back before tryAcquire returned.
    expect(await copies()).toEqual([0, 1, 1]);

    // A loss fails the wait at once rather than at the test's timeout.
    const lost = a.next('lost', (event) => event.key === KEY).then((event) => Promise.reject(new Error(`a lost its lease (${event.reason})`)));
    lost.catch(() => undefined);
    for (let i = 0; i < 2; i++) await Promise.race([a.next('renewed', (event) => event.key === KEY), lost]);
    expect(lease.signal.aborted).toBe(false);
    // Renewals never re-create a copy: the lease rests on masters 1 and 2 until it is released.
    expect(await copies()).toEqual([0, 1, 1]);
    expect(await b.locks.tryAcquire(KEY)).toBeNull();

    leave();
    await holding;
    const next = await b.locks.acquire(KEY, { waitMs: 0 });
    await timeline.section('b', next, async () => undefined);
    expect(next.fencingToken).toBeGreaterThan(lease.fencingToken);
    await next.release();
    const history = timeline.toString();
    expect({ violations: timeline.violations(KEY), history }).toEqual({ violations: [], history });
    expect(timeline.after(jumped).filter((entry) => entry.kind === 'lost' || entry.kind === 'renew-failed')).toEqual([]);
    console.log(`redlock clock-jump drill (one master +30 s): a #${lease.fencingToken} renewed on, b refused twice, then b #${next.fencingToken} after a's release`);
  });

  /** The second copy of the holder's gone early: a second jump, or what the restarted-empty drill does. */
  async function twoJumps(): Promise<void> {
    await jump(0, 30);
    await jump(1, 30);
  }
  async function jumpAndRestart(): Promise<void> {
    await jump(0, 30);
    await masters.restartEmpty(1);
  }

  it.each([
    ['two masters jump forward', twoJumps],
    ['one master jumps forward and another restarts empty', jumpAndRestart],
  ])('%s: a second holder is granted with a higher token, the first learns at its next renewal, and its late fenced write is refused', async (variant, fault) => {
    const resource = new RedisFencedResource(redisUrl(), `${prefix}resource:${fault.name}`);
    try {
      const { lease, holding, lost } = await holdUntilLost(a, timeline, 'a', KEY);
      const lostAt = lost.then((event) => ({ event, at: Date.now(), deadline: lease.deadline }));
      await fault();
      expect(await copies()).toEqual([0, 0, 1]);

      const second = await b.locks.tryAcquire(KEY);
      expect(second).not.toBeNull();
      const grantedAt = Date.now();
      // Two holders at once: what Redlock allows once a majority of copies is gone early.
      expect(lease.signal.aborted).toBe(false);
      expect(second!.fencingToken).toBeGreaterThan(lease.fencingToken);
      await timeline.section('b', second!, async () => expect(await resource.write('write of b', second!.fencingToken)).toBe(true));
      // a still believes it holds; the resource refuses its write all the same.
      expect(await resource.write('late write of a', lease.fencingToken)).toBe(false);

      const learned = await lostAt;
      expect(learned.event).toMatchObject({ key: KEY, reason: 'rejected' });
      expect(await holding).toBeInstanceOf(LeaseLostError);
      expect(await resource.read()).toEqual({ value: 'write of b', token: second!.fencingToken });
      await second!.release();
      expect(timeline.violations(KEY).length).toBeGreaterThan(0);
      console.log(
        `redlock clock-jump drill (${variant}): a #${lease.fencingToken}, b #${second!.fencingToken} (+${second!.fencingToken - lease.fencingToken}); ` +
          `a told '${learned.event.reason}' ${learned.at - grantedAt} ms after b's grant, ${learned.deadline - learned.at} ms before its local deadline`,
      );
    } finally {
      resource.close();
    }
  });

  it("one master jumps backward: a crashed holder's copy outlives its lease there, and the next holders are granted on the other two with rising tokens", async () => {
    const c = await createLockApp({ store: 'redlock', redlock: { masters: masters.urls }, keyPrefix: prefix, leaseMs: LEASE_MS, holder: 'c' });
    timeline.follow('c', c);
    const worker = forkWorker(join(__dirname, '../lease/workers/hold.worker.ts'), [prefix, KEY, String(LEASE_MS)], {
      LOCK_TEST_STORE: 'redlock',
      REDLOCK_MASTERS: masters.urls.join(','),
    });
    try {
      const { fencingToken: crashed } = await nextMessage<{ held: boolean; fencingToken: number }>(worker, (m) => m.held);
      expect(await copies()).toEqual([1, 1, 1]);
      worker.kill('SIGKILL');
      await exitOf(worker);
      const killedAt = Date.now();

      await jump(0, -3_600);
      const outlives = await masters.ask(0, (redis) => redis.pttl(lockKey));
      expect(outlives).toBeGreaterThan(100 * LEASE_MS);

      const second = await b.locks.acquire(KEY, { waitMs: 30 * LEASE_MS });
      const handedOnMs = Date.now() - killedAt;
      expect(second.fencingToken).toBeGreaterThan(crashed);
      // Granted by masters 1 and 2; master 0 still keeps the crashed holder's copy, and refuses.
      expect(await masters.ask(0, (redis) => redis.get(lockKey))).toContain(`|${crashed}|`);
      await timeline.section('b', second, async () => expect(await c.locks.tryAcquire(KEY)).toBeNull());
      await second.release();

      const third = await c.locks.acquire(KEY, { waitMs: 0 });
      await timeline.section('c', third, async () => undefined);
      expect(third.fencingToken).toBeGreaterThan(second.fencingToken);
      expect(await masters.ask(0, (redis) => redis.get(lockKey))).toContain(`|${crashed}|`);
      await third.release();
      const history = timeline.toString();
      expect({ violations: timeline.violations(KEY), history }).toEqual({ violations: [], history });
      console.log(
        `redlock clock-jump drill (one master -3600 s): crashed holder #${crashed}, its copy on master 0 ${outlives} ms to live; ` +
          `b #${second.fencingToken} ${handedOnMs} ms after the crash, c refused while b held, then c #${third.fencingToken}`,
      );
    } finally {
      worker.kill('SIGKILL');
      await c.close();
    }
  });
});
