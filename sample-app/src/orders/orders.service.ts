import { Injectable, NotFoundException } from '@nestjs/common';
import { Transactional, TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DistributedLock, LockService } from 'nestjs-distributed-lock';
import { fencedTypeOrmUpdate } from 'nestjs-distributed-lock/fencing/typeorm';
import { InstanceStats } from '../stats/instance-stats.service.js';
import { DrillHooks } from './drill-hooks.service.js';
import { Order } from './order.entity.js';
import { Payment } from './payment.entity.js';
import { OrderChangedError } from './order-changed.error.js';

/** Lease of one payment; the demo shortens it so its pause drill outlasts it quickly. */
const PAY_LEASE_MS = Number(process.env.PAY_LEASE_MS ?? 10_000);

export interface PaymentReceipt {
  readonly orderId: string;
  readonly status: Order['status'];
  readonly installment: number | null;
  readonly fencingToken: number;
}

@Injectable()
export class OrdersService {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly locks: LockService,
    private readonly stats: InstanceStats,
    private readonly drills: DrillHooks,
  ) {}

  /**
   * Pays the next installment. The lock makes read-then-write of `paidInstallments` safe across instances;
   * `@Transactional` sits inside it and the lock is released only after the COMMIT. The fenced UPDATE is
   * the database's own guard for the case no lock can cover, a holder frozen past its lease: it applies
   * only with a newer fencing token than the last write (else `StaleFencingTokenError`, which the
   * library's error filter answers with 409) and only if the row still holds what was read (a frozen holder
   * may have written just before it froze and committed just after it woke).
   */
  @DistributedLock({ key: 'order:{orderId}', waitMs: 2_000, leaseMs: PAY_LEASE_MS })
  @Transactional()
  async pay(orderId: string, drillStallMs = 0): Promise<PaymentReceipt> {
    const lease = this.locks.current()!;
    const { fencingToken } = lease;
    const tx = this.txHost.tx;
    const order = await tx.findOneBy(Order, { id: orderId });
    if (!order) throw new NotFoundException(`Order ${orderId} not found.`);
    if (order.status !== 'open') return { orderId, status: order.status, installment: null, fencingToken };
    await this.drills.stallWhileHolding(orderId, lease, drillStallMs);

    const installment = order.paidInstallments + 1;
    const status = installment >= order.installments ? 'paid' : 'open';
    await tx.insert(Payment, { orderId, installment, fencingToken: String(fencingToken), instance: this.stats.instance });
    const updated = await fencedTypeOrmUpdate(tx, {
      entity: Order,
      fenceProperty: 'lastFencingToken',
      set: { paidInstallments: installment, status },
      where: { id: orderId },
      expect: { paidInstallments: order.paidInstallments },
      fencedBy: lease,
    });
    if (updated !== 1) throw new OrderChangedError(orderId);
    return { orderId, status, installment, fencingToken };
  }

  async get(orderId: string): Promise<Order> {
    const order = await this.txHost.tx.findOneBy(Order, { id: orderId });
    if (!order) throw new NotFoundException(`Order ${orderId} not found.`);
    return order;
  }
}
