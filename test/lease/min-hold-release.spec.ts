import type { RenewRequest } from '../../lib/index';
import { gatedMemoryApp } from '../support/gated-store';

/**
 * A release within the minimum hold keeps the key for what remains of it. A renewal of the lease already
 * on its way may reach the store after that release (a pool of connections, as PostgreSQL's, runs them in
 * either order; the torture run saw it): it must not stretch the kept key to a whole lease again.
 */
describe('release within the minimum hold', () => {
  const gated = gatedMemoryApp(__filename);

  it('keeps the key no longer than the minimum hold when a renewal was on its way', async () => {
    const leaseMs = 3_000;
    const minHoldMs = 2_500;
    // The watchdog's first renewal (a third into the lease) is held at the store's door...
    const renewal = gated.store.hold('renew', ([requests]) => (requests as RenewRequest[]).some((r) => r.key === 'kept'));
    const lease = await gated.app.locks.acquire('kept', { leaseMs, minHoldMs });
    await renewal.entered;
    // ...while the holder releases, which keeps the key for the rest of the minimum hold; then the renewal
    // reaches the store.
    const releasing = lease.release();
    await new Promise((resolve) => setImmediate(resolve));
    renewal.open();
    await releasing;
    // The renewal's call, let through, has reached the memory store by the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    const held = await gated.store.inspect('kept');
    expect(held).not.toBeNull();
    expect(held!.ttlMs).toBeLessThanOrEqual(minHoldMs - leaseMs / 3 + 50);
  });

  it('gives the key back after a renewal on its way when the lease expired within the minimum hold', async () => {
    const leaseMs = 3_000;
    const minHoldMs = 3_600;
    const order: string[] = [];
    // The watchdog's renewal is held at the store's door until the lease is past its deadline...
    const renewal = gated.store.hold('renew', ([requests]) => (requests as RenewRequest[]).some((r) => r.key === 'expired'));
    const giveBack = gated.store.hold('release', ([key]) => key === 'expired');
    void giveBack.entered.then(() => order.push('give-back'));
    const lost = gated.app.next('lost', (e) => e.key === 'expired');
    const grantedAt = Date.now();
    await gated.app.locks.acquire('expired', { leaseMs, minHoldMs });
    await renewal.entered;
    expect((await lost).reason).toBe('expired');
    // (A give-back sent with the loss has reached the door by the next turn of the event loop.)
    await new Promise((resolve) => setImmediate(resolve));
    // ...then let through: the give-back that keeps the key must reach the store after it, or the renewal
    // would stretch the kept key to a whole lease.
    order.push('renewal');
    renewal.open();
    await giveBack.entered;
    expect(order).toEqual(['renewal', 'give-back']);
    giveBack.open();
    await new Promise((resolve) => setImmediate(resolve));
    const held = await gated.store.inspect('expired');
    expect(held).not.toBeNull();
    expect(held!.ttlMs).toBeLessThanOrEqual(minHoldMs - (Date.now() - grantedAt) + 50);
  });
});
