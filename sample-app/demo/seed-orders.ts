import type { Client } from 'pg';

export const HOT_ORDERS = Array.from({ length: 4 }, (_, i) => `hot-${i + 1}`);
export const COLD_ORDERS = Array.from({ length: 120 }, (_, i) => `cold-${i + 1}`);
export const DRILL_ORDER = 'drill-1';

/**
 * Hot orders have more installments than the demo can pay, so every request on them contends for the same
 * lock all run long; cold orders are paid off in three installments; a third of the cold ones expire a few
 * seconds in, which gives the cron job real work.
 */
export async function seedOrders(db: Client): Promise<void> {
  await db.query('TRUNCATE orders, payments, job_runs, stock_items');
  const rows: Array<[string, number, number]> = [
    ...HOT_ORDERS.map((id): [string, number, number] => [id, 1_000_000, 3_600]),
    ...COLD_ORDERS.map((id, i): [string, number, number] => [id, 3, i % 3 === 0 ? 4 : 3_600]),
    [DRILL_ORDER, 10, 3_600],
  ];
  await db.query(
    `INSERT INTO orders (id, installments, expires_at)
     SELECT id, installments, now() + make_interval(secs => expires_in)
     FROM unnest($1::text[], $2::int[], $3::int[]) AS t(id, installments, expires_in)`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
  );
  await db.query(`INSERT INTO stock_items (sku, available) VALUES ('sku-1', 1000000)`);
}
