import { Logger, type INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Order } from '../orders/order.entity.js';
import { StockItem } from '../stock/stock-item.entity.js';

const logger = new Logger('SampleApp');

/**
 * For someone who ran `npm run start:sample` by hand: a few orders and a stock item to try (only into an
 * empty database), then where the app listens, what to call, and how to see its locks with the runbook.
 */
export async function welcome(app: INestApplication, port: number): Promise<void> {
  const db = app.get(DataSource);
  if ((await db.getRepository(Order).count()) === 0) {
    const inAnHour = new Date(Date.now() + 3_600_000);
    await db.getRepository(Order).insert(['o-1', 'o-2', 'o-3'].map((id) => ({ id, installments: 3, expiresAt: inAnHour })));
    await db.getRepository(StockItem).insert({ sku: 'sku-1', available: 100 });
    logger.log('Seeded orders o-1, o-2, o-3 (3 installments each) and 100 of sku-1');
  }
  const url = `http://127.0.0.1:${port}`;
  const prefix = process.env.LOCK_STORE === 'memory' ? undefined : (process.env.LOCK_KEY_PREFIX ?? 'sample:');
  logger.log(
    [
      `Listening on ${url}`,
      `  curl -X POST ${url}/orders/o-1/pay        pay the next installment (under the lock order:o-1)`,
      `  curl ${url}/orders/o-1                    the order`,
      `  curl -X POST ${url}/stock/sku-1/reserve -H 'content-type: application/json' -d '{"quantity":1}'`,
      `  curl ${url}/health                        lock store, watchdog, database`,
      `  curl ${url}/stats                         this instance's counters`,
      prefix
        ? `Locks live under the prefix "${prefix}": npm run locks -- list --redis ${process.env.REDIS_URL} --prefix ${prefix}`
        : 'LOCK_STORE=memory: locks live in this process only.',
    ].join('\n'),
  );
}
