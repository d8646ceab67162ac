import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DistributedLockModule, LockStore, type LockModuleOptions } from '../../lib/index';
import type { HeldLockSample, QueueSample } from '../history/records';

/** How often the sampler lists the store: well below every bound it checks against. */
export const SAMPLE_EVERY_MS = 300;
const SAMPLE_BOUND_MS = 3_000;

type RecordFn = (record: { type: 'sample'; start: number; end: number; locks?: HeldLockSample[]; queues?: QueueSample[]; error?: string }) => void;

/**
 * The parent's view of the store, for invariant (d): every few hundred ms, the held locks as the store
 * lists them (the runbook's `list`, through a lock module of the parent's own that takes no leases) and,
 * on Redis, the fair queues read directly. A sample is recorded with when it began and ended: a lock it
 * lists existed at some moment in between.
 */
export class LockSampler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  private constructor(
    private readonly app: INestApplicationContext,
    private readonly store: LockStore,
    private readonly scanQueues: (() => Promise<QueueSample[]>) | undefined,
    private readonly record: RecordFn,
  ) {}

  static async open(options: LockModuleOptions, scanQueues: (() => Promise<QueueSample[]>) | undefined, record: RecordFn): Promise<LockSampler> {
    @Module({ imports: [DistributedLockModule.forRoot(options)] })
    class SamplerModule {}
    const app = await NestFactory.createApplicationContext(SamplerModule, { logger: false });
    return new LockSampler(app, app.get<LockStore>(LockStore), scanQueues, record);
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.running = this.sample().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, SAMPLE_EVERY_MS);
      });
    };
    tick();
  }

  /** One last sample once the applications are gone, then the sampler's own application closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.sample();
    await this.app.close();
  }

  private async sample(): Promise<void> {
    const start = Date.now();
    try {
      const [held, queues] = await bounded(Promise.all([this.store.list(), this.scanQueues?.() ?? Promise.resolve([])]));
      const locks = held.map((lock) => ({ key: lock.key, fence: lock.fencingToken, ttlMs: lock.ttlMs, holder: lock.holder }));
      this.record({ type: 'sample', start, end: Date.now(), locks, queues });
    } catch (error) {
      this.record({ type: 'sample', start, end: Date.now(), error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** A listing that takes longer than this (a paused server) is recorded as failed rather than awaited. */
function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('sample timed out')), SAMPLE_BOUND_MS)));
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
