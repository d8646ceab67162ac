import { LeaseLostError, type RenewRequest } from '../../lib/index';
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

  /**
   * Holds the watchdog's next renewal of `key` and the give-back of `key` at the store's door. `renewalFirst`
   * lets the renewal through, then checks the give-back came only after it (one sent at once, with the loss,
   * has reached the door by the next turn of the event loop), and lets the give-back through.
   */
  function renewalAndGiveBack(key: string): { renewalHeld: Promise<void>; renewalFirst(): Promise<void> } {
    const order: string[] = [];
    const renewal = gated.store.hold('renew', ([requests]) => (requests as RenewRequest[]).some((r) => r.key === key));
    const giveBack = gated.store.hold('release', ([released]) => released === key);
    void giveBack.entered.then(() => order.push('give-back'));
    return {
      renewalHeld: renewal.entered,
      async renewalFirst() {
        await new Promise((resolve) => setImmediate(resolve));
        order.push('renewal');
        renewal.open();
        await giveBack.entered;
        expect(order).toEqual(['renewal', 'give-back']);
        giveBack.open();
      },
    };
  }

  it('gives the key back after a renewal on its way when the lease expired within the minimum hold', async () => {
    const minHoldMs = 3_600;
    const calls = renewalAndGiveBack('expired');
    const lost = gated.app.next('lost', (e) => e.key === 'expired');
    const grantedAt = Date.now();
    await gated.app.locks.acquire('expired', { leaseMs: 3_000, minHoldMs });
    await calls.renewalHeld;
    expect((await lost).reason).toBe('expired');
    // The give-back keeps the key: after it, the renewal would stretch the kept key to a whole lease.
    await calls.renewalFirst();
    await new Promise((resolve) => setImmediate(resolve));
    const held = await gated.store.inspect('expired');
    expect(held).not.toBeNull();
    expect(held!.ttlMs).toBeLessThanOrEqual(minHoldMs - (Date.now() - grantedAt) + 50);
  });

  it('lets the renewal land first too when the release itself finds the lease past its deadline', async () => {
    const calls = renewalAndGiveBack('late');
    const lease = await gated.app.locks.acquire('late', { leaseMs: 3_000, minHoldMs: 3_600 });
    await calls.renewalHeld;
    // A frozen event loop (GC pause, blocked CPU): no watchdog timer runs before the release looks.
    while (Date.now() <= lease.deadline) {
      // busy: the deadline passes with the renewal still on its way
    }
    const released = lease.release().catch((error: unknown) => error);
    await calls.renewalFirst();
    expect(await released).toBeInstanceOf(LeaseLostError);
  });
});
