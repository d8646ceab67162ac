import type { Client } from 'pg';
import { DRILL_ORDER } from './seed-orders.js';

export interface InvariantCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

/** What must hold in the database after the run, whatever the load and the injected fault did. */
export async function checkInvariants(db: Client, drillTakeoverToken: number | undefined): Promise<{
  checks: InvariantCheck[];
  doublePayments: number;
  cronTicks: number;
  cronRunsPerTick: Record<string, number>;
}> {
  const checks: InvariantCheck[] = [];
  const check = (name: string, ok: boolean, detail: string): void => void checks.push({ name, ok, detail });

  const duplicates = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM (SELECT order_id, installment FROM payments GROUP BY 1, 2 HAVING count(*) > 1) d`,
  );
  const doublePayments = Number(duplicates.rows[0]!.n);
  check('no installment paid twice (double payments)', doublePayments === 0, `${doublePayments} duplicated installments`);

  const lost = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM orders o
     WHERE o.paid_installments <> (SELECT count(*) FROM payments p WHERE p.order_id = o.id)`,
  );
  check('every order counts exactly its payments (no lost update)', lost.rows[0]!.n === '0', `${lost.rows[0]!.n} orders disagree`);

  const overpaid = await db.query<{ n: string }>(`SELECT count(*) AS n FROM orders WHERE paid_installments > installments`);
  check('no order paid beyond its installments', overpaid.rows[0]!.n === '0', `${overpaid.rows[0]!.n} overpaid orders`);

  const unordered = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM (
       SELECT fencing_token <= lag(fencing_token) OVER (PARTITION BY order_id ORDER BY installment) AS backwards
       FROM payments) t WHERE backwards`,
  );
  check(
    'fencing tokens increase with every installment of an order',
    unordered.rows[0]!.n === '0',
    `${unordered.rows[0]!.n} payments carry an older token than the one before`,
  );

  const drill = await db.query<{ installment: number; fencing_token: string }>(
    `SELECT installment, fencing_token FROM payments WHERE order_id = $1 ORDER BY installment`,
    [DRILL_ORDER],
  );
  check(
    'the paused holder’s late write left no trace; the new holder’s payment stands',
    drill.rows.length === 1 && Number(drill.rows[0]!.fencing_token) === drillTakeoverToken,
    `${DRILL_ORDER} has ${drill.rows.length} payment(s)`,
  );

  const ticks = await db.query<{ tick: string; runs: string }>(
    `SELECT tick, count(*) AS runs FROM job_runs GROUP BY tick ORDER BY tick`,
  );
  const cronRunsPerTick = Object.fromEntries(ticks.rows.map((row) => [row.tick, Number(row.runs)]));
  const multi = ticks.rows.filter((row) => row.runs !== '1');
  check(
    'the cron job ran exactly once per tick across all instances',
    ticks.rows.length > 0 && multi.length === 0,
    `${ticks.rows.length} ticks, ${multi.length} with more than one run`,
  );
  return { checks, doublePayments, cronTicks: ticks.rows.length, cronRunsPerTick };
}
