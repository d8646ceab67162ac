import { holdingCount, queueWait, type QueuedShape, type QueueShape } from './queue-order';

let created = 0;
const entry = (shape: QueueShape, permits = 0): QueuedShape<string> => ({ key: `k${++created}`, shape, permits });
const names = (queue: ReadonlyArray<QueuedShape<string>>, count: number): string[] => queue.slice(0, count).map((e) => e.key);

describe('the admission rule of a lock queue a store keeps (etcd, ZooKeeper)', () => {
  it('lets one plain or writer key hold, alone, and nothing behind it', () => {
    expect(holdingCount([])).toBe(0);
    expect(holdingCount([entry('plain'), entry('plain')])).toBe(1);
    expect(holdingCount([entry('write'), entry('read'), entry('read')])).toBe(1);
  });

  it('lets readers hold together up to the first key of another shape, and no reader behind it (writer-preferring, FIFO)', () => {
    const queue = [entry('read'), entry('read'), entry('write'), entry('read')];
    expect(holdingCount(queue)).toBe(2);
    expect(queueWait(queue.slice(0, 2), 'write')).toEqual({ kind: 'deletion', key: queue[1]!.key });
    expect(queueWait(queue.slice(0, 3), 'read')).toEqual({ kind: 'deletion', key: queue[2]!.key });
    expect(queueWait(queue.slice(0, 2), 'read')).toEqual({ kind: 'granted' });
  });

  it('lets the first N permit keys hold, each counted against its own N, never a key behind a waiter', () => {
    const queue = [entry('permits', 2), entry('permits', 2), entry('permits', 2)];
    expect(holdingCount(queue)).toBe(2);
    // A larger N behind a waiting key still waits for it: holders are always the front of the queue.
    expect(holdingCount([...queue, entry('permits', 10)])).toBe(2);
    expect(queueWait(queue, 'permits', 10)).toEqual({ kind: 'change', key: queue[2]!.key });
    // The first waiter waits for any holder to go.
    expect(queueWait(queue.slice(0, 2), 'permits', 2)).toEqual({ kind: 'any-deletion', keys: [queue[0]!.key, queue[1]!.key] });
    expect(queueWait(queue.slice(0, 2), 'permits', 3)).toEqual({ kind: 'granted' });
    // A lowered N: nobody new until fewer than it hold.
    expect(queueWait(queue.slice(0, 2), 'permits', 1)).toMatchObject({ kind: 'any-deletion' });
    // A raised N lets more in behind holders of the old one.
    const raised = [entry('permits', 1), entry('permits', 4)];
    expect(names(raised, holdingCount(raised))).toEqual(names(raised, 2));
  });

  it('keeps shapes apart: a permit key waits for the last key of another shape before it, a reader for a permit holder', () => {
    const queue = [entry('permits', 5), entry('read'), entry('permits', 5)];
    expect(holdingCount(queue)).toBe(1);
    expect(queueWait(queue.slice(0, 2), 'permits', 5)).toEqual({ kind: 'deletion', key: queue[1]!.key });
    expect(queueWait(queue.slice(0, 1), 'read')).toEqual({ kind: 'deletion', key: queue[0]!.key });
    expect(queueWait([entry('plain')], 'permits', 5)).toMatchObject({ kind: 'deletion' });
  });
});
