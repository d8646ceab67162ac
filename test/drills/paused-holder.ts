import { join } from 'node:path';
import { exitOf, forkWorker, nextMessage } from '../support/child-process';
import type { LockApp } from '../support/lock-app';
import type { RedisFencedResource } from '../support/redis-fenced-resource';

/** What a paused-holder drill needs: the app that takes over, the worker's store, the fenced resource. */
export interface PausedHolderDrill {
  readonly store: string;
  readonly app: LockApp;
  /** The environment that makes the worker lock on the drill's store (see test/lease/workers/worker-store.ts). */
  readonly workerEnv: NodeJS.ProcessEnv;
  readonly prefix: string;
  readonly leaseMs: number;
  readonly resource: RedisFencedResource;
}

/**
 * A worker holds `job` and is SIGSTOPped; the drill's app waits for the key, gets it with a higher token
 * and writes to the fenced resource; the worker, resumed, must report its lease lost by its own deadline
 * ('expired') and its late write refused. Shared by every store's paused-holder drill.
 */
export async function runPausedHolderDrill(drill: PausedHolderDrill): Promise<void> {
  const { app, prefix, leaseMs, resource } = drill;
  const worker = forkWorker(join(__dirname, '../lease/workers/paused-holder.worker.ts'), [prefix, 'job', String(leaseMs), `${prefix}resource`], drill.workerEnv);
  try {
    const { fencingToken: old } = await nextMessage<{ held: boolean; fencingToken: number }>(worker, (m) => m.held);
    const verdict = nextMessage<{ lost: string; writeAccepted: boolean }>(worker, (m) => 'lost' in m);
    worker.kill('SIGSTOP');
    const pausedAt = Date.now();

    const lease = await app.locks.acquire('job', { waitMs: 30 * leaseMs });
    const handedOnMs = Date.now() - pausedAt;
    expect(lease.fencingToken).toBeGreaterThan(old);
    expect(await resource.write('write of the new holder', lease.fencingToken)).toBe(true);

    worker.kill('SIGCONT');
    const resumedAt = Date.now();
    expect(await verdict).toEqual({ lost: 'expired', writeAccepted: false });
    expect(await resource.read()).toEqual({ value: 'write of the new holder', token: lease.fencingToken });
    expect(await exitOf(worker)).toBe(0);
    console.log(`${drill.store} paused-holder drill: lease ${leaseMs} ms; next holder in ${handedOnMs} ms after the pause; the paused holder knew ${Date.now() - resumedAt} ms after it resumed`);
    await lease.release();
  } finally {
    worker.kill('SIGCONT');
    worker.kill('SIGKILL');
  }
}
