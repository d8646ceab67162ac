import type { QueuedAcquireRequest } from '../lock-store.interface';
import type { DeletionWatch } from './etcd-deletion-watch';
import { acquireInQueue, type QueuePosition, type QueueBackend } from './etcd-lock-queue';
import type { QueueEntry } from './etcd-queue-order';

/**
 * The scheduling side of a wait in etcd, against a scripted backend (the etcd side and the admission rule
 * have their own specs against a real etcd): when a granted permit waiter puts its key again for the one
 * behind it, and what it does when etcd cancels its watch. Its lock semantics are tested in
 * test/stores/etcd-*.spec.ts.
 */
const holder = (n: number): QueueEntry => ({ key: Buffer.from(`h${n}`), createRevision: n, shape: 'permits', permits: 1 });

function backend(script: { enqueue: () => { earlier?: QueueEntry[] }; positions?: QueuePosition[] }) {
  const marks: number[] = [];
  const watch = (): DeletionWatch => ({ connected: new Promise<void>(() => undefined), ended: new Promise<void>(() => undefined), cancel: () => undefined });
  const api: QueueBackend = {
    lease: async () => ({ leaseId: '1', ttlSeconds: 10, waiterKey: Buffer.from('me'), refreshedAt: Date.now() }),
    enqueue: async () => ({ createRevision: 10, ...script.enqueue() }),
    position: async () => script.positions!.shift()!,
    keepAlive: async () => true,
    watch,
    mark: (_request, ticket) => void marks.push(ticket.createRevision),
    leave: () => undefined,
    granted: () => undefined,
  };
  return { api, marks };
}

const request: QueuedAcquireRequest = { key: 'k', token: 't', leaseMs: 30_000, holder: 'me', deadline: Date.now() + 60_000 };

describe('a wait in etcd: the mark of a granted permit waiter', () => {
  it('is put when the grant is found by a retried enqueue with a permit waiter already behind it', async () => {
    // The retry finds its key in place, and reads its place at once.
    const positions: QueuePosition[] = [{ present: true, earlier: [], successor: 'permits' }];
    const { api, marks } = backend({ enqueue: () => ({}), positions });
    await expect(acquireInQueue(request, 'permits', 2, api)).resolves.toMatchObject({ result: { acquired: true, fencingToken: 10 } });
    expect(marks).toEqual([10]);
  });

  it('is put by a waiter granted at a later look only when a permit key is right behind it', async () => {
    for (const [successor, expected] of [['permits', [10]], ['read', []], [undefined, []]] as const) {
      const positions: QueuePosition[] = [{ present: true, earlier: [], successor }];
      const { api, marks } = backend({ enqueue: () => ({ earlier: [holder(1), holder(2)] }), positions });
      // Woken by the watch's confirmation (never here) or the periodic look: a short lease makes it come soon.
      await expect(acquireInQueue({ ...request, leaseMs: 30 }, 'permits', 2, api)).resolves.toMatchObject({ result: { acquired: true } });
      expect(marks).toEqual(expected);
    }
  });

  it('is never put by a plain waiter, a reader or a writer', async () => {
    for (const shape of ['plain', 'read', 'write'] as const) {
      const { api, marks } = backend({ enqueue: () => ({}), positions: [{ present: true, earlier: [], successor: 'permits' }] });
      await acquireInQueue(request, shape, 0, api);
      expect(marks).toEqual([]);
    }
  });
});

describe('a wait in etcd whose watch etcd cancels', () => {
  it('watches again at its next look, which the cancellation brings at once', async () => {
    const watches: Array<{ end: () => void; cancelled: boolean }> = [];
    const { api } = backend({ enqueue: () => ({ earlier: [{ ...holder(1), shape: 'plain' }] }) });
    api.position = async () => ({ present: true, earlier: [{ ...holder(1), shape: 'plain' }] });
    api.watch = () => {
      let end!: () => void;
      const entry = { end: () => end(), cancelled: false };
      watches.push(entry);
      return { connected: new Promise<void>(() => undefined), ended: new Promise<void>((resolve) => (end = resolve)), cancel: () => void (entry.cancelled = true) };
    };
    const gaveUp = new AbortController();
    const waiting = acquireInQueue({ ...request, signal: gaveUp.signal }, 'plain', 0, api);
    await until(() => watches.length === 1);
    // etcd cancelled it (its start revision compacted, say): no event will come through it again.
    watches[0]!.end();
    await until(() => watches.length === 2);
    gaveUp.abort(new Error('the caller gave up'));
    await expect(waiting).rejects.toThrow('the caller gave up');
    expect(watches.map((watch) => watch.cancelled)).toEqual([false, true]);
  });
});

/** A condition of this process's own state, looked at every turn of the event loop for up to 2 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not come within 2 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
