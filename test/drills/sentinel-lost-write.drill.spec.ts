import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LockStoreUnavailableError, type Lease } from '../../lib/index';
import { startRedisSentinel, type RedisSentinelGroup } from '../../scripts/servers/redis-sentinel';
import { askRedis } from '../../scripts/servers/server-probes';
import { createLockApp, type LockApp } from '../support/lock-app';
import { TcpProxy } from '../support/tcp-proxy';
import { testPrefix } from '../support/test-prefix';
import { DrillTimeline } from '../topology/support/drill-timeline';
import { sentinelOption } from '../topology/support/topology-fixtures';
import { storedFence } from '../support/stored-lock';

// A failover on a loaded 2-core box can take far longer than alone: every step waits on a condition, never
// on a guessed sleep, so a generous bound only matters when something is really stuck.
jest.setTimeout(180_000);

interface Outcome {
  readonly timeline: DrillTimeline;
  readonly first: Lease | LockStoreUnavailableError;
  readonly second: Lease;
  readonly file: string;
}

/**
 * Drill "lock write lost before replication" from the seeds: Redis replicates asynchronously, so a grant
 * the primary acknowledged can be missing from the replica that takes over. The replica here replicates
 * through a TCP proxy that stops forwarding the primary's stream just before the grant; then the primary is
 * SIGKILLed and Sentinel promotes the replica, which never saw the grant.
 *
 * Without `replicas`: instance A is granted the key, the failover loses it, instance B is granted it on
 * the new primary, and A learns at its next renewal: two holders meanwhile (the window is measured and
 * saved), with B's fencing token larger, so a fenced resource still refuses A. With `replicas: 1`: the
 * grant is not acknowledged by the replica, so A is told the acquisition failed and the key is given back:
 * there is never a second holder.
 */
describe('drill: a grant lost with the primary before it reached the replica', () => {
  const prefix = testPrefix(__filename);
  const windows: Record<string, number> = {};

  afterAll(() => {
    const directory = join(__dirname, '../../.tmp/drill-timelines');
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'sentinel-lost-write-windows.json'), JSON.stringify(windows, null, 2));
  });

  async function lostWrite(replicas: number): Promise<Outcome> {
    const timeline = new DrillTimeline(`sentinel-lost-write-replicas-${replicas}`);
    let proxy: TcpProxy | undefined;
    const group: RedisSentinelGroup = await startRedisSentinel({
      replicateFrom: async (primaryPort) => (proxy = await TcpProxy.start(primaryPort)).port,
    });
    const apps: LockApp[] = [];
    try {
      const options = { redis: sentinelOption(group), keyPrefix: prefix, commandTimeoutMs: 1_000 };
      // A renews late (every ~6.7 s), so a grant lost in the failover stays believed until then.
      const a = await createLockApp({ ...options, replicas, leaseMs: 20_000 });
      const b = await createLockApp({ ...options, leaseMs: 20_000, retryMaxDelayMs: 50 });
      apps.push(a, b);
      timeline.watch(a, 'A');
      timeline.watch(b, 'B');
      await (await a.locks.acquire('warm-up:a', { waitMs: 0 })).release();
      await (await b.locks.acquire('warm-up:b', { waitMs: 0 })).release();
      const primary = await group.primaryPort();

      proxy!.holdServerData();
      timeline.mark('replication-held');
      const first = await a.locks.acquire('ledger', { waitMs: 0 }).catch((error: unknown) => {
        if (error instanceof LockStoreUnavailableError) return error;
        throw error;
      });
      timeline.mark('A-acquire', first instanceof LockStoreUnavailableError ? String(first.cause) : { fencingToken: first.fencingToken });
      timeline.mark('on-old-primary', await askRedis(primary, (redis) => storedFence(redis, `${prefix}ledger`)));

      timeline.mark('sigkill-primary', { port: primary });
      await group.kill(primary);
      proxy!.cut();
      const second = await b.locks.acquire('ledger', { waitMs: 30_000 });
      timeline.mark('new-primary', { port: await group.waitForNewPrimary(primary) });
      if (!(first instanceof LockStoreUnavailableError)) await a.next('lost', (e) => e.key === 'ledger');
      return { timeline, first, second, file: timeline.save() };
    } finally {
      for (const app of apps) await app.close();
      await proxy?.close();
      await group.stop();
    }
  }

  it('without replicas: both hold the key until A’s next renewal; B’s fencing token is larger', async () => {
    const { timeline, first, second, file } = await lostWrite(0);
    if (first instanceof LockStoreUnavailableError) throw first;
    expect(timeline.holds().filter((hold) => hold.actor === 'A' && hold.key === 'ledger')).toEqual([expect.objectContaining({ end: 'lost' })]);
    expect(timeline.all().find((e) => e.actor === 'A' && e.event === 'lost')).toMatchObject({ detail: 'rejected' });
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    windows['replicas: 0'] = timeline.overlaps().find((o) => o.key === 'ledger')?.ms ?? 0;
    expect(file).toContain('replicas-0');
  });

  it('with replicas: 1: the unacknowledged grant is refused and given back, so there is never a second holder', async () => {
    const { timeline, first, file } = await lostWrite(1);
    expect(first).toBeInstanceOf(LockStoreUnavailableError);
    expect(String((first as LockStoreUnavailableError).cause)).toMatch(/only 0 of 1 replica\(s\) acknowledged it .*; it was released/);
    expect(timeline.all().find((e) => e.event === 'on-old-primary')).toMatchObject({ detail: null });
    expect(timeline.holds().filter((hold) => hold.actor === 'A' && hold.key === 'ledger')).toEqual([]);
    windows['replicas: 1'] = timeline.overlaps().reduce((sum, o) => sum + o.ms, 0);
    expect({ file, overlaps: timeline.overlaps() }).toEqual({ file, overlaps: [] });
  });
});
