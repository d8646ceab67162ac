import { AsyncResource } from 'node:async_hooks';
import { LeaseContext, type LeaseFrame } from './lease-context.js';
import type { Lease } from './lease.js';

/** No transactions in these specs: a joined scope never hands its lease to one. */
const NO_TRANSACTIONS = { hold: () => false, endScope: async () => undefined };

/** Just what LeaseContext asks of a lease. */
function fakeLease(key: string): Lease {
  return { key, held: true, enterScope: () => undefined, exitScope: () => undefined } as unknown as Lease;
}

/** How many frames the current async context keeps reachable, running or not. */
function chainLength(context: LeaseContext): number {
  let length = 0;
  const storage = (context as unknown as { storage: { getStore(): LeaseFrame | undefined } }).storage;
  for (let frame = storage.getStore(); frame; frame = frame.parent) length++;
  return length;
}

/** A scope as LockService runs one: open, the code in it, closed once that settled. */
async function runScope<T>(context: LeaseContext, lease: Lease, fn: () => Promise<T>): Promise<T> {
  const frame = context.open(lease);
  try {
    return await context.runIn(frame, fn);
  } finally {
    context.close(frame);
  }
}

describe('LeaseContext', () => {
  it('does not chain the frames of a locked method that reschedules itself from inside its body', async () => {
    const context = new LeaseContext(NO_TRANSACTIONS);
    const lease = fakeLease('poll');
    const depths: number[] = [];
    await new Promise<void>((done) => {
      let runs = 0;
      const poll = (): Promise<void> =>
        runScope(context, lease, async () => {
          depths.push(chainLength(context));
          if (++runs < 200) setTimeout(() => void poll(), 0);
          else done();
        });
      void poll();
    });
    expect(Math.max(...depths)).toBe(1);
  });

  it('sees only running scopes: a scope that ended is not current in work it left behind', async () => {
    const context = new LeaseContext(NO_TRANSACTIONS);
    let inScope!: () => Lease | undefined;
    await runScope(context, fakeLease('outer'), async () => {
      // Runs later, in the async context of the scope, as a timer or listener it set up would.
      inScope = AsyncResource.bind(() => context.current());
      expect(inScope()?.key).toBe('outer');
    });
    expect(inScope()).toBeUndefined();
  });
});
