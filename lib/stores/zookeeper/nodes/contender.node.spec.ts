import { LockStoreUnavailableError } from '../../../errors/lock-store-unavailable.error';
import type { ZookeeperClient } from '../zookeeper-client.interface';
import type { ZookeeperSession } from '../zookeeper-session';
import { nodeReplyOf, ZK } from '../zookeeper-reply';
import { createContender } from './contender.node';

/** A session whose contender creates find the lock's parent gone `vanishings` times before one lands. */
function sessionWithParentVanishing(vanishings: number): { session: ZookeeperSession; parentCreates: string[] } {
  const parentCreates: string[] = [];
  let left = vanishings;
  const client: Pick<ZookeeperClient, 'create'> = {
    create: async (path, _data, mode) => {
      if (mode === 0) {
        parentCreates.push(path);
        return path;
      }
      if (left-- > 0) throw Object.assign(new Error(`Exception: NO_NODE[${ZK.NONODE}]@${path}`), { code: ZK.NONODE });
      return `${path}0000000001`;
    },
  };
  const session = {
    servers: 'zk-0:2181',
    call: async <T>(_operation: string, _key: string, send: (client: ZookeeperClient) => Promise<T>): Promise<T> => {
      try {
        return await send(client as ZookeeperClient);
      } catch (error) {
        throw nodeReplyOf(error) ?? error;
      }
    },
  } as unknown as ZookeeperSession;
  return { session, parentCreates };
}

describe('createContender', () => {
  it("creates the lock's parent again when a releasing process deleted it, empty, under the contender", async () => {
    const { session, parentCreates } = sessionWithParentVanishing(2);
    await expect(createContender(session, 'k', '/nestjs-distributed-lock/k/lock-ab-', '{}')).resolves.toBe('/nestjs-distributed-lock/k/lock-ab-0000000001');
    // The parent alone, each time: the root exists (created once, never deleted), so nobody asks for it.
    expect(parentCreates).toEqual(['/nestjs-distributed-lock/k', '/nestjs-distributed-lock/k']);
  });

  it('gives up after a bounded number of vanished parents, as a store error (unknown), never a loop', async () => {
    const { session } = sessionWithParentVanishing(Number.POSITIVE_INFINITY);
    const error = await createContender(session, 'k', '/nestjs-distributed-lock/k/lock-ab-', '{}').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(LockStoreUnavailableError);
    expect((error as Error).message).toContain('vanished 6 times in a row');
  });
});
