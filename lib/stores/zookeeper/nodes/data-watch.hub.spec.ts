import type { ZookeeperClient, ZookeeperStat } from '../zookeeper-client.interface';
import type { ZookeeperSession } from '../zookeeper-session';
import { nodeReplyOf, ZK } from '../zookeeper-reply';
import { DataWatchHub } from './data-watch.hub';

const STAT: ZookeeperStat = { czxid: 7, version: 0, ephemeralOwner: '1' };

/**
 * A session whose reads answer as `answer` says (a stat, no node, or no answer although the watch was set),
 * recording each watcher set on the server; `end()` ends it as an expiry would. The hub's sharing itself is
 * tested against a real ZooKeeper (test/stores/zookeeper-many-waiters.spec.ts).
 */
function scriptedSession(answer: (path: string) => ZookeeperStat | 'no node' | 'no answer') {
  const watchers: Array<() => void> = [];
  const ends = new Set<() => void>();
  const client: Pick<ZookeeperClient, 'getData'> = {
    getData: async (path, watcher) => {
      const reply = answer(path);
      if (reply === 'no node') throw Object.assign(new Error(`Exception: NO_NODE[${ZK.NONODE}]@${path}`), { code: ZK.NONODE });
      if (watcher) watchers.push(watcher);
      if (reply === 'no answer') throw new Error('no answer within 2000 ms');
      return { stat: reply, data: undefined };
    },
  };
  const session = {
    call: async <T>(_operation: string, _key: string, send: (client: ZookeeperClient) => Promise<T>): Promise<T> => {
      try {
        return await send(client as ZookeeperClient);
      } catch (error) {
        throw nodeReplyOf(error) ?? error;
      }
    },
    whenEnded: (listener: () => void) => (ends.add(listener), () => ends.delete(listener)),
  } as unknown as ZookeeperSession;
  return { session, watchers, end: () => ends.forEach((listener) => listener()) };
}

describe('DataWatchHub', () => {
  it('calls every listener once when the session ends (its watches went with it), and keeps none', async () => {
    const { session, end } = scriptedSession(() => STAT);
    const hub = new DataWatchHub(session);
    const called: string[] = [];
    await hub.watch('k', '/a', () => called.push('a'));
    await hub.watch('k', '/b', () => called.push('b'));
    end();
    expect(called.sort()).toEqual(['a', 'b']);
    expect(hub.listeners).toBe(0);
  });

  it('leaves no listener for a node that is gone, and asks again for the next waiter', async () => {
    let gone = true;
    const { session, watchers } = scriptedSession(() => (gone ? 'no node' : STAT));
    const hub = new DataWatchHub(session);
    await expect(hub.watch('k', '/a', () => undefined)).resolves.toBeNull();
    expect(hub.listeners).toBe(0);
    gone = false;
    await expect(hub.watch('k', '/a', () => undefined)).resolves.toMatchObject({ stat: STAT });
    expect(watchers).toHaveLength(1);
  });

  it('forgets a watch whose request got no answer: the next waiter asks again, and that watch, set all the same, calls nobody', async () => {
    let answered = false;
    const { session, watchers } = scriptedSession(() => (answered ? STAT : 'no answer'));
    const hub = new DataWatchHub(session);
    let gaveUp = 0;
    await expect(hub.watch('k', '/a', () => gaveUp++)).rejects.toThrow('no answer');
    expect(hub.listeners).toBe(0);
    answered = true;
    let called = 0;
    await hub.watch('k', '/a', () => called++);
    expect(watchers).toHaveLength(2);
    // The node changes: the client calls both watchers it holds.
    for (const watcher of watchers) watcher();
    expect([gaveUp, called]).toEqual([0, 1]);
  });
});
