import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DistributedLock } from 'nestjs-distributed-lock';
import { Order } from '../orders/order.entity.js';
import { InstanceStats } from '../stats/instance-stats.service.js';
import { JobRun } from './job-run.entity.js';

/** The job runs every CLOSE_EXPIRED_EVERY_S seconds on every instance; the lock lets one of them work. */
export const CLOSE_EXPIRED_PERIOD_MS = 1_000 * Number(process.env.CLOSE_EXPIRED_EVERY_S ?? 2);

@Injectable()
export class CloseExpiredOrdersJob {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly stats: InstanceStats,
  ) {}

  /**
   * `onLocked: 'skip'`: instances that lose the race do nothing this tick. `minHoldMs` keeps the key held
   * for most of the period even though the job takes milliseconds, so an instance whose clock (or timer)
   * is a little late does not run the same tick again after the winner finished.
   */
  @Cron(`*/${CLOSE_EXPIRED_PERIOD_MS / 1_000} * * * * *`)
  @DistributedLock('job:close-expired-orders', { waitMs: 0, onLocked: 'skip', minHoldMs: CLOSE_EXPIRED_PERIOD_MS * 0.75 })
  @Transactional()
  async closeExpired(): Promise<void> {
    this.stats.cronRuns++;
    const tick = Math.round(Date.now() / CLOSE_EXPIRED_PERIOD_MS) * CLOSE_EXPIRED_PERIOD_MS;
    await this.txHost.tx.insert(JobRun, { job: 'close-expired-orders', tick: String(tick), instance: this.stats.instance });
    await this.txHost.tx
      .createQueryBuilder()
      .update(Order)
      .set({ status: 'expired' })
      .where("status = 'open' AND expires_at < now()")
      .execute();
  }
}
