import type { RenewRequest } from '../../lib/index';
import { gatedMemoryApp } from '../support/gated-store';

describe('extend()', () => {
  const gated = gatedMemoryApp(__filename);

  it('never leaves the local deadline beyond the store’s TTL when a renewal with the old length races it', async () => {
    const lease = await gated.app.locks.acquire('race', { leaseMs: 600 });
    // The watchdog's next renewal (asking for the old 600 ms) is held at the store's door...
    const renewal = gated.store.hold('renew', ([requests]) => (requests as RenewRequest[]).some((r) => r.key === 'race'));
    await renewal.entered;
    // ...while the holder extends to 60 s; then the old renewal reaches the store.
    const renewed = gated.app.next('renewed', (e) => e.key === 'race');
    const extending = lease.extend(60_000);
    await new Promise((resolve) => setImmediate(resolve));
    renewal.open();
    await Promise.all([extending, renewed]);
    const held = await gated.store.inspect('race');
    expect(held).not.toBeNull();
    // The local view may err early, never late.
    expect(lease.expiresAt).toBeLessThanOrEqual(Date.now() + held!.ttlMs + 5);
    expect(held!.ttlMs).toBeGreaterThan(30_000);
    await lease.release();
  });

  it('renews a lease extended below the renew interval it was granted with, instead of expiring it', async () => {
    // Granted for 3 s (renewed every second), then shortened to 300 ms.
    const lease = await gated.app.locks.acquire('shortened');
    await lease.extend(300);
    const outcome = await new Promise<string>((resolve) => {
      let renewals = 0;
      const offRenewed = gated.app.events.on('renewed', (e) => {
        if (e.key === 'shortened' && ++renewals === 3) finish('renewed');
      });
      const offLost = gated.app.events.on('lost', (e) => e.key === 'shortened' && finish(`lost: ${e.reason}`));
      const finish = (result: string): void => {
        offRenewed();
        offLost();
        resolve(result);
      };
    });
    expect(outcome).toBe('renewed');
    await lease.release();
  });

  it('runs concurrent extensions one after another, the last one’s length winning', async () => {
    const lease = await gated.app.locks.acquire('twice');
    await Promise.all([lease.extend(20_000), lease.extend(40_000)]);
    const held = await gated.store.inspect('twice');
    expect(held!.ttlMs).toBeGreaterThan(30_000);
    expect(lease.expiresAt).toBeLessThanOrEqual(Date.now() + held!.ttlMs + 5);
    await lease.release();
    await expect(lease.extend(1_000)).rejects.toMatchObject({ code: 'LEASE_RELEASED' });
  });
});

