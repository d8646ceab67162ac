import type { QueuedAcquireRequest } from '../lock-store.interface';
import type { DeletionWatch } from './etcd-deletion-watch';
import { acquireInQueue, type QueuePosition, type QueueBackend } from './etcd-lock-queue';
import type { QueueEntry } from './etcd-queue-order';

/**
 * The scheduling side of a wait in etcd, against a scripted backend (the etcd side and the admission rule
 * have their own specs against a real etcd): when a granted permit waiter puts its key again for the one
 * behind it. Its lock semantics are tested in test/stores/etcd-shaped-*.spec.ts.
 */
const holder = (n: number): QueueEntry => ({ key: Buffer.from(`h${n}`), createRevision: n, shape: 'permits', permits: 1 });

function backend(script: { enqueue: () => { earlier?: QueueEntry[] }; positions?: QueuePosition[] }) {
  const marks: number[] = [];
  const watch = (): DeletionWatch => ({ connected: new Promise<void>(() => undefined), cancel: () => undefined });
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
