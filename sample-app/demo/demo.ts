import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startPostgresServer } from '../../scripts/servers/postgres-server.js';
import { startRedisServer } from '../../scripts/servers/redis-server.js';
import { parseDemoOptions } from './demo-options.js';
import { describeLateWrite, formatSummary, percentile, type DemoReport, type InstanceReport } from './demo-summary.js';
import { InstanceCluster } from './instance-cluster.js';
import { checkInvariants } from './invariants.js';
import { LoadDriver } from './load-driver.js';
import { runPauseDrill } from './pause-drill.js';
import { seedOrders } from './seed-orders.js';

interface InstanceStatsSnapshot {
  acquisitions: number;
  staleWritesRejected: number;
  leasesLost: number;
  cronRuns: number;
  waitsMs: number[];
}

const cleanups: Array<() => Promise<void>> = [];

/** A server the demo started, so it stops it too. */
async function owned<T extends { stop(): Promise<void> }>(starting: Promise<T>): Promise<T> {
  const server = await starting;
  cleanups.push(() => server.stop());
  return server;
}

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
}

/**
 * `npm run demo`: a private Redis and PostgreSQL, several sample-app processes paying orders under heavy
 * contention while their cron job ticks, one holder frozen past its lease midway, then invariant checks
 * against the database. Exits non-zero if any invariant fails.
 */
async function main(): Promise<number> {
  const options = parseDemoOptions(process.argv.slice(2));
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const logDir = mkdtempSync(join(tmpdir(), 'lock-demo-'));
  cleanups.push(async () => rmSync(logDir, { recursive: true, force: true }));

  say('Starting Redis and PostgreSQL…');
  const redisUrl = process.env.REDIS_URL ?? (await owned(startRedisServer())).url;
  const databaseUrl = process.env.DATABASE_URL ?? (await owned(startPostgresServer())).url;

  const cluster = new InstanceCluster(logDir, {
    REDIS_URL: redisUrl,
    DATABASE_URL: databaseUrl,
    DEMO_DRILLS: '1',
    PAY_LEASE_MS: String(options.payLeaseMs),
    CLOSE_EXPIRED_EVERY_S: String(options.cronEverySeconds),
  });
  cleanups.push(() => cluster.stopAll());
  say(`Starting ${options.instances} sample-app instances…`);
  await cluster.start('instance-1', { DB_SYNCHRONIZE: 'true' });
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  cleanups.push(() => db.end());
  await seedOrders(db);
  await Promise.all(
    Array.from({ length: options.instances - 1 }, (_, i) => cluster.start(`instance-${i + 2}`, { DB_SYNCHRONIZE: 'false' })),
  );
  say(cluster.instances.map((i) => `  ${i.name} → ${i.url}`).join('\n'));

  say(`Paying orders for ${options.seconds} s with ${options.concurrency} concurrent clients…`);
  const load = new LoadDriver(cluster.instances);
  const started = Date.now();
  const progress = setInterval(() => {
    const t = load.total();
    say(`  ${Math.round((Date.now() - started) / 1000)}s  requests ${t.requests}  200 ${t.ok}  409 ${t.conflicts}  errors ${t.errors}`);
  }, 2_000);
  // Interrupted or failed: stop the traffic before the instances go away.
  cleanups.push(async () => {
    clearInterval(progress);
    load.stop();
  });
  const running = load.run(options.concurrency);

  await new Promise((resolve) => setTimeout(resolve, (options.seconds * 1000) / 3));
  say(`Fault: freezing ${cluster.instances[0]!.name} (SIGSTOP) while it holds an order's lock, longer than the lease…`);
  const drill = await runPauseDrill(cluster, cluster.instances[0]!, cluster.instances[1]!, options.payLeaseMs);
  say(`  resumed after ${drill.pausedForMs} ms; its late write ${describeLateWrite(drill)}`);

  const remaining = options.seconds * 1000 - (Date.now() - started);
  if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
  load.stop();
  await running;
  clearInterval(progress);

  const stats = await Promise.all(
    cluster.instances.map(async (instance) => (await (await fetch(`${instance.url}/stats`)).json()) as InstanceStatsSnapshot),
  );
  const invariants = await checkInvariants(db, drill.takeoverFencingToken);
  const instances: InstanceReport[] = cluster.instances.map((instance, i) => ({
    name: instance.name,
    ...load.traffic.get(instance.name)!,
    acquisitions: stats[i]!.acquisitions,
    staleWritesRejected: stats[i]!.staleWritesRejected,
    leasesLost: stats[i]!.leasesLost,
    cronRuns: stats[i]!.cronRuns,
  }));
  const waits = stats.flatMap((s) => s.waitsMs);
  const staleWritesRejected = instances.reduce((n, i) => n + i.staleWritesRejected, 0);
  const checks = [
    ...invariants.checks,
    {
      name: 'the fencing check refused the paused holder’s late write',
      ok: staleWritesRejected >= 1 && drill.lateWriteCode === 'STALE_FENCING_TOKEN' && drill.lateWriteStatus === 409,
      detail: `${staleWritesRejected} stale writes refused; the late write ${describeLateWrite(drill)}`,
    },
    {
      name: 'the new holder paid while the old one was frozen',
      ok: drill.takeoverStatus === 200 && (drill.takeoverFencingToken ?? 0) > drill.pausedFencingToken,
      detail: `takeover answered ${drill.takeoverStatus} with fencing ${drill.takeoverFencingToken}`,
    },
    {
      // Requests in flight on the frozen instance lose their leases: they may fail; nothing else may.
      name: 'every request outside the frozen instance was answered 200 or 409',
      ok: instances.every((i) => i.name === drill.pausedInstance || i.errors === 0) && load.total().ok > 0,
      detail: instances.map((i) => `${i.name}: ${i.errors} errors`).join(', '),
    },
  ];
  const report: DemoReport = {
    seconds: options.seconds,
    instances,
    waitP50Ms: percentile(waits, 50),
    waitP99Ms: percentile(waits, 99),
    doublePayments: invariants.doublePayments,
    staleWritesRejected,
    cronTicks: invariants.cronTicks,
    drill,
    checks,
    ok: checks.every((check) => check.ok),
  };
  say(formatSummary(report));
  if (options.json) say(`DEMO_REPORT ${JSON.stringify(report)}`);
  if (!report.ok) {
    for (const instance of cluster.instances) say(`\n--- last log lines of ${instance.name} ---\n${cluster.tail(instance)}`);
  }
  return report.ok ? 0 : 1;
}

process.once('SIGINT', () => {
  process.stdout.write('\nInterrupted: stopping everything the demo started…\n');
  void cleanUp().then(() => process.exit(130));
});

main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    return 1;
  })
  .then(async (code) => {
    await cleanUp();
    process.exit(code);
  });
