import { Inject, Injectable } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { DistributedLock, LockStore } from '../../lib/index';
import { testPrefix } from '../support/test-prefix';
import { errorCollectingLogger, redisLock, startLockedApp, type LockedApp } from './locked-app';

const PREFIX = testPrefix(__filename);
const INSTANCE = Symbol('instance name');
const LEDGER = Symbol('ledger');
/** Long enough to cover both instances' attempts at one tick on a loaded machine, short enough to wait out. */
const MIN_HOLD_MS = 3_000;
/** Registered and started like any cron job, but never due during the test: ticks are fired by the test. */
const NEVER_DURING_TEST = '0 0 1 1 *';

@Injectable()
class ExpiredOrdersJob {
  constructor(
    @Inject(INSTANCE) private readonly instance: string,
    @Inject(LEDGER) private readonly ledger: string[],
  ) {}

  @Cron(NEVER_DURING_TEST, { name: 'lock-below-cron', waitForCompletion: true })
  @DistributedLock('job:close-expired:below', { waitMs: 0, onLocked: 'skip', minHoldMs: MIN_HOLD_MS })
  async closeExpired(): Promise<void> {
    this.ledger.push(`below:${this.instance}`);
  }

  @DistributedLock('job:close-expired:above', { waitMs: 0, onLocked: 'skip', minHoldMs: MIN_HOLD_MS })
  @Cron(NEVER_DURING_TEST, { name: 'lock-above-cron', waitForCompletion: true })
  async closeExpiredToo(): Promise<void> {
    this.ledger.push(`above:${this.instance}`);
  }

  @Cron(NEVER_DURING_TEST, { name: 'no-min-hold', waitForCompletion: true })
  @DistributedLock('job:no-min-hold', { waitMs: 0, onLocked: 'skip' })
  async withoutMinHold(): Promise<void> {
    this.ledger.push(`no-min-hold:${this.instance}`);
  }
}

describe('@Cron + @DistributedLock: one execution per tick across two instances', () => {
  const ledger: string[] = [];
  const logger = errorCollectingLogger();
  let a: LockedApp;
  let b: LockedApp;

  const start = (instance: string): Promise<LockedApp> =>
    startLockedApp({
      lock: redisLock(PREFIX),
      imports: [ScheduleModule.forRoot()],
      providers: [ExpiredOrdersJob, { provide: INSTANCE, useValue: instance }, { provide: LEDGER, useValue: ledger }],
      logger,
    });

  /** Fires a tick the way the cron timer does: through the job @nestjs/schedule registered at startup. */
  const tick = (app: LockedApp, job: string): Promise<void> => app.get(SchedulerRegistry).getCronJob(job).fireOnTick();
  const runs = (job: string): string[] => ledger.filter((entry) => entry.startsWith(`${job}:`));

  /** Waits (by polling the store) until the key is free again, i.e. until minHoldMs has passed. */
  const untilFree = async (key: string): Promise<void> => {
    while (await a.get<LockStore>(LockStore).inspect(key)) await new Promise((resolve) => setTimeout(resolve, 50));
  };

  beforeAll(async () => {
    a = await start('A');
    b = await start('B');
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  afterEach(() => {
    // @nestjs/schedule only logs what a job throws: an error here would mean a tick failed instead of skipping.
    expect(logger.errors).toEqual([]);
  });

  it('registers the locked method with @nestjs/schedule in either decorator order', () => {
    for (const app of [a, b]) {
      expect(app.get(SchedulerRegistry).getCronJobs().size).toBe(3);
    }
  });

  it.each([
    ['below', 'lock-below-cron', 'job:close-expired:below'],
    ['above', 'lock-above-cron', 'job:close-expired:above'],
  ])('runs the tick on exactly one instance when both fire it at once (@DistributedLock %s @Cron)', async (name, job, key) => {
    await Promise.all([tick(a, job), tick(b, job)]);
    expect(runs(name)).toHaveLength(1);

    // An instance whose clock is behind fires the same tick after the run already finished: minHoldMs keeps
    // the key, so it skips instead of running the tick a second time.
    const held = await a.get<LockStore>(LockStore).inspect(key);
    expect(held?.ttlMs).toBeGreaterThan(0);
    expect(held?.ttlMs).toBeLessThanOrEqual(MIN_HOLD_MS);
    await tick(b, job);
    await tick(a, job);
    expect(runs(name)).toHaveLength(1);

    // The next tick, once minHoldMs has passed, again runs exactly once.
    await untilFree(key);
    await Promise.all([tick(b, job), tick(a, job)]);
    expect(runs(name)).toHaveLength(2);
  });

  it('control: without minHoldMs, a late instance runs the same tick again', async () => {
    await tick(a, 'no-min-hold');
    await tick(b, 'no-min-hold');
    expect(runs('no-min-hold')).toEqual(['no-min-hold:A', 'no-min-hold:B']);
  });
});
