import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exitOf, forkWorker } from '../support/child-process';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { startEtcdCluster, type EtcdCluster } from '../../scripts/servers/etcd-server';
import { startZookeeperEnsemble, type ZookeeperEnsemble } from '../../scripts/servers/zookeeper-server';
import { openPostgresTestDatabase, type PostgresTestDatabase } from '../stores/postgres-test-database';
import { postgresWorkerEnv } from './workers/worker-store';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 2;
const ITERATIONS = 15;

interface Replay {
  /** Every broken rule, with the history entry it was found at. */
  readonly violations: string[];
  readonly holds: number;
  /** Most holders seen at once (for the log: how much the run overlapped). */
  readonly mostAtOnce: number;
}

/**
 * Replays a recorded history (see shaped-history.worker.ts) in Redis' order. At every recorded entry: no
 * writer with anyone else, no reader with a writer, no more than `permits` holders, and a fencing token
 * issued once. Fencing order is checked where the history proves the grant order: a writer's hold overlaps
 * no other, so every hold recorded before a writer's entry was granted before it (its token must be
 * greater than all of theirs), and every hold recorded after a writer's exit was granted after its release
 * (their tokens must be greater than its). Readers or permit holders recorded one after another may have
 * been granted the other way round while both held, so their mutual order is not inferred.
 */
function replay(history: readonly string[], permits?: number): Replay {
  const active = new Map<number, string>();
  const seen = new Set<number>();
  const violations: string[] = [];
  let highestEntered = 0;
  let lastWriterEnded = 0;
  let mostAtOnce = 0;
  history.forEach((entry, at) => {
    const [kind, mode, digits] = entry.split('|') as [string, string, string];
    const fence = Number(digits);
    if (kind === 'exit') {
      active.delete(fence);
      if (mode === 'write') lastWriterEnded = Math.max(lastWriterEnded, fence);
      return;
    }
    const where = `#${at} ${entry}`;
    if (seen.has(fence)) violations.push(`${where}: fencing token issued twice`);
    if (fence <= lastWriterEnded) violations.push(`${where}: fencing token not above the writer that ended before (${lastWriterEnded})`);
    if (mode === 'write' && fence <= highestEntered) violations.push(`${where}: writer's fencing token not above a hold granted before (${highestEntered})`);
    const modes = [...active.values()];
    if (mode === 'write' && modes.length > 0) violations.push(`${where}: a writer with ${modes.join(',')} holding`);
    if (mode === 'read' && modes.includes('write')) violations.push(`${where}: a reader with a writer holding`);
    if (permits !== undefined && modes.length >= permits) violations.push(`${where}: permit ${modes.length + 1} of ${permits}`);
    seen.add(fence);
    highestEntered = Math.max(highestEntered, fence);
    active.set(fence, mode);
    mostAtOnce = Math.max(mostAtOnce, active.size);
  });
  return { violations, holds: seen.size, mostAtOnce };
}

// Three processes start (each transpiles the library) before any lock is taken: on a loaded box that alone
// can take most of the default minute.
jest.setTimeout(180_000);

let db: PostgresTestDatabase | undefined;
let etcd: EtcdCluster | undefined;
let zookeeper: ZookeeperEnsemble | undefined;
afterAll(async () => {
  await db?.stop();
  await etcd?.stop();
  await zookeeper?.stop();
});

// The workers lock on the store named; the history and the counter stay on the run's Redis either way.
// With `fair: true`, readers, writers and permit holders wait in the key's queue in Redis.
const STORES: Array<[string, () => NodeJS.ProcessEnv]> = [
  ['Redis', () => ({})],
  ['Redis, fair: true', () => ({ LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ fair: true }) })],
  ['PostgreSQL', () => postgresWorkerEnv(db!.url)],
  // Waiters of every shape queue in etcd (FIFO across the processes), as plain ones do.
  ['etcd', () => ({ LOCK_TEST_STORE: 'etcd', ETCD_ENDPOINTS: etcd!.endpoints.join(',') })],
  // So do they under the lock's node in ZooKeeper (sequence order), each hold its own ephemeral node.
  [
    'ZooKeeper',
    () => ({ LOCK_TEST_STORE: 'zookeeper', ZOOKEEPER_CONNECT: zookeeper!.connect, LOCK_TEST_MODULE_OPTIONS: JSON.stringify({ leaseMs: 10_000 }) }),
  ],
];

describe.each(STORES)('shaped locks across processes on %s', (name, env) => {
  beforeAll(async () => {
    if (name === 'PostgreSQL') db = await openPostgresTestDatabase(__filename);
    if (name === 'etcd') etcd = await startEtcdCluster();
    if (name === 'ZooKeeper') zookeeper = await startZookeeperEnsemble();
  });

  const run = async (shape: string): Promise<{ replayed: Replay; counter: number; writes: number }> => {
    const prefix = testPrefix(`${__filename}:${name}:${shape}`);
    const historyKey = `${prefix}history`;
    const redis = new Redis(redisUrl());
    try {
      const workers = Array.from({ length: PROCESSES }, () =>
        forkWorker(join(__dirname, 'workers/shaped-history.worker.ts'), [prefix, historyKey, shape, String(LOOPS_PER_PROCESS), String(ITERATIONS)], env()),
      );
      expect(await Promise.all(workers.map(exitOf))).toEqual(workers.map(() => 0));
      const history = await redis.lrange(historyKey, 0, -1);
      const permits = shape.startsWith('permits:') ? Number(shape.slice('permits:'.length)) : undefined;
      return {
        replayed: replay(history, permits),
        counter: Number((await redis.get(`${historyKey}:counter`)) ?? 0),
        writes: Number((await redis.get(`${historyKey}:writes`)) ?? 0),
      };
    } finally {
      redis.disconnect();
    }
  };

  it('never lets a writer in with another holder, loses no writer increment, and fences every hold above the ones before it (3 processes)', async () => {
    const { replayed, counter, writes } = await run('rw');
    expect(replayed.violations).toEqual([]);
    expect(replayed.holds).toBe(PROCESSES * LOOPS_PER_PROCESS * ITERATIONS);
    expect(writes).toBeGreaterThan(0);
    expect(counter).toBe(writes);
  });

  it('never lets more than N permit holders in at once, and fences every hold above the ones before it (3 processes)', async () => {
    const { replayed } = await run('permits:2');
    expect(replayed.violations).toEqual([]);
    expect(replayed.holds).toBe(PROCESSES * LOOPS_PER_PROCESS * ITERATIONS);
  });
});

describe('the history replay of shaped locks', () => {
  it('finds the violations it looks for in a history that has them', () => {
    const broken = ['enter|read|10', 'enter|write|11', 'exit|write|11', 'enter|read|9', 'enter|permit|12', 'enter|permit|12', 'enter|write|5'];
    expect(replay(broken).violations).toEqual([
      '#1 enter|write|11: a writer with read holding',
      '#3 enter|read|9: fencing token not above the writer that ended before (11)',
      '#5 enter|permit|12: fencing token issued twice',
      "#6 enter|write|5: fencing token not above the writer that ended before (11)",
      "#6 enter|write|5: writer's fencing token not above a hold granted before (12)",
      '#6 enter|write|5: a writer with read,read,permit holding',
    ]);
    // Two readers granted one way and recorded the other way round are no violation.
    expect(replay(['enter|read|8', 'exit|read|8', 'enter|read|7', 'exit|read|7']).violations).toEqual([]);
    expect(replay(['enter|write|1', 'enter|read|2']).violations).toEqual(['#1 enter|read|2: a reader with a writer holding']);
    expect(replay(['enter|permit|1', 'enter|permit|2', 'enter|permit|3'], 2).violations).toHaveLength(1);
  });
});
