import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3 } from 'etcd3';
import { LockStoreUnavailableError } from '../../lib/index';
import { MEMBER_RETRY_AFTER_MS } from '../../lib/stores/etcd/etcd-host-policy';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { createLockApp, type LockApp } from '../support/lock-app';
import { testPrefix } from '../support/test-prefix';
import { openObserver, pollUntil } from './etcd-test-support';

/**
 * etcd3 skips a member after three failures in a row (a circuit breaker per member). During an outage of
 * the whole ensemble (an election: every member answers "no leader"), every circuit opens. With etcd3's
 * default the client then refused every call for five seconds after the ensemble served again; the store
 * has members tried again after a second, its own retry cap.
 */
describe('etcd: members the client skipped after failures', () => {
  const prefix = testPrefix(__filename);
  let cluster: EtcdCluster;
  let observer: Etcd3;
  let app: LockApp;

  beforeAll(async () => {
    cluster = await startEtcdCluster({ size: 3 });
    observer = openObserver(cluster);
    app = await createLockApp({ store: 'etcd', etcd: cluster.endpoints, keyPrefix: prefix, commandTimeoutMs: 300 });
  });
  afterAll(async () => {
    for (const member of cluster?.members ?? []) member.resume();
    await app?.close();
    observer?.close();
    await cluster?.stop();
  });

  it('are tried again a second after the ensemble stopped answering, so a call soon after it serves again is granted', async () => {
    await (await app.locks.acquire('after-outage', { waitMs: 0 })).release();
    for (const member of cluster.members) member.pause();
    try {
      // Until the client refuses by itself: every member's circuit is open.
      let refusedByClient = false;
      while (!refusedByClient) {
        const error = await app.locks.acquire('after-outage', { waitMs: 0 }).then(
          () => undefined,
          (failure: unknown) => failure,
        );
        expect(error).toBeInstanceOf(LockStoreUnavailableError);
        refusedByClient = /circuit/i.test(String((error as Error).cause));
      }
      // The outage lasts past the retry delay; nothing is sent meanwhile.
      await sleep(MEMBER_RETRY_AFTER_MS + 300);
    } finally {
      for (const member of cluster.members) member.resume();
    }
    await pollUntil(async () => (await observer.put(`${prefix}probe`).value('1').then(() => true, () => false)), 'the ensemble serves again');
    // A call that was still on its way when the members stopped may have failed meanwhile and closed a
    // circuit again for one more second: a short wait covers that, far below etcd3's own five seconds.
    const lease = await app.locks.acquire('after-outage', { waitMs: 3_000 });
    expect(lease.fencingToken).toBeGreaterThan(0);
    await lease.release();
  });
});
