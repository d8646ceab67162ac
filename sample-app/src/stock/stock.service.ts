import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { LockService } from 'nestjs-distributed-lock';
import { fencedTypeOrmUpdate } from 'nestjs-distributed-lock/fencing/typeorm';
import { StockItem } from './stock-item.entity.js';

@Injectable()
export class StockService {
  constructor(
    private readonly locks: LockService,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /**
   * A manual lock scope: `await using` releases the lease when the block ends, after the transaction
   * inside it has committed. The fencing token guards the write as in OrdersService.pay.
   *
   * `return await`, not `return`: the block ends when the return statement runs, so without the await the
   * lease would be released while the transaction is still in flight.
   */
  async reserve(sku: string, quantity: number): Promise<{ sku: string; available: number }> {
    await using lease = await this.locks.acquire(`stock:${sku}`, { waitMs: 2_000, leaseMs: 5_000 });
    return await this.txHost.withTransaction(async () => {
      const item = await this.txHost.tx.findOneBy(StockItem, { sku });
      if (!item) throw new NotFoundException(`SKU ${sku} not found.`);
      if (item.available < quantity) throw new ConflictException(`Only ${item.available} of ${sku} left.`);
      const available = item.available - quantity;
      // A refused stale write rejects with StaleFencingTokenError (409 through the library's error filter).
      await fencedTypeOrmUpdate(this.txHost.tx, {
        entity: StockItem,
        fenceProperty: 'lastFencingToken',
        set: { available },
        where: { sku },
        fencedBy: lease,
      });
      return { sku, available };
    });
  }
}
