import { EtcdKeyLayout, encodeWaiterValue } from './etcd-key-layout';
import { queueEntryOf } from './etcd-queue-order';
import type { QueueShape } from '../queue/queue-order';

describe('the entries of an etcd lock queue', () => {
  it('reads shape and N back from the keys and values the store writes; a damaged permit value waits to be first', () => {
    const layout = new EtcdKeyLayout('lock:');
    const kv = (shape: QueueShape, value: Buffer) => ({ key: layout.waiterKey('a', '7', shape), value, create_revision: '9' }) as never;
    expect(queueEntryOf(layout, kv('permits', encodeWaiterValue({ holder: 'h', leaseMs: 1, permits: 3 })))).toMatchObject({ shape: 'permits', permits: 3, createRevision: 9 });
    expect(queueEntryOf(layout, kv('permits', Buffer.from('by hand')))).toMatchObject({ shape: 'permits', permits: 1 });
    expect(queueEntryOf(layout, kv('read', Buffer.from('{}')))).toMatchObject({ shape: 'read', permits: 0 });
  });
});
