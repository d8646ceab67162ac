import { Redis } from 'ioredis';
import { Pool } from 'pg';
import type { LockModuleOptions } from '../../../lib/index';

/**
 * Which store the worker processes lock on, from their environment: Redis at REDIS_URL (the default, or
 * the JSON `redis` option in LOCK_TEST_REDIS_OPTION; more module options as JSON in LOCK_TEST_MODULE_OPTIONS);
 * PostgreSQL when LOCK_TEST_STORE=postgres, at LOCK_TEST_POSTGRES_URL (whose search path names the spec's
 * schema); etcd when LOCK_TEST_STORE=etcd, at ETCD_ENDPOINTS (comma-separated client URLs); ZooKeeper when
 * LOCK_TEST_STORE=zookeeper, at ZOOKEEPER_CONNECT (a connect string); Redlock when LOCK_TEST_STORE=redlock, on
 * the masters in REDLOCK_MASTERS (comma-separated redis:// URLs). The shared value
 * the workers race on lives in PostgreSQL for the PostgreSQL store, in Redis otherwise: it is the thing
 * being protected, not the lock.
 */
export function workerLockOptions(keyPrefix: string, extraOptions: Partial<LockModuleOptions> = {}): LockModuleOptions {
  // More module options from the spec that forked the worker (JSON): `fair: true`, for one.
  const extra = { ...extraOptions, ...(process.env.LOCK_TEST_MODULE_OPTIONS ? JSON.parse(process.env.LOCK_TEST_MODULE_OPTIONS) : {}) };
  if (process.env.LOCK_TEST_STORE === 'postgres') {
    return { store: 'postgres', postgres: process.env.LOCK_TEST_POSTGRES_URL!, keyPrefix, ...extra };
  }
  if (process.env.LOCK_TEST_STORE === 'etcd') {
    return { store: 'etcd', etcd: process.env.ETCD_ENDPOINTS!.split(','), keyPrefix, ...extra };
  }
  if (process.env.LOCK_TEST_STORE === 'zookeeper') {
    return { store: 'zookeeper', zookeeper: process.env.ZOOKEEPER_CONNECT!, keyPrefix, ...extra };
  }
  if (process.env.LOCK_TEST_STORE === 'redlock') {
    return { store: 'redlock', redlock: { masters: process.env.REDLOCK_MASTERS!.split(',') }, keyPrefix, ...extra };
  }
  // The lock may live elsewhere than the counter (a Cluster, a Sentinel group: test/topology); the counter
  // then stays on the run's single Redis.
  const redis = process.env.LOCK_TEST_REDIS_OPTION ? JSON.parse(process.env.LOCK_TEST_REDIS_OPTION) : process.env.REDIS_URL!;
  return { redis, keyPrefix, ...extra };
}

/** The environment that makes a worker lock on PostgreSQL. */
export function postgresWorkerEnv(url: string): NodeJS.ProcessEnv {
  return { LOCK_TEST_STORE: 'postgres', LOCK_TEST_POSTGRES_URL: url };
}

/** A value read and written in two separate steps (a lost update if two holders overlap), plus a history. */
export interface SharedCounter {
  read(): Promise<number>;
  write(value: number): Promise<void>;
  /** Appends (value written, fencing token of the lease it was written under). */
  record(value: number, fencingToken: number): Promise<void>;
  close(): Promise<void>;
}

export async function openSharedCounter(name: string): Promise<SharedCounter> {
  if (process.env.LOCK_TEST_STORE === 'postgres') return PostgresCounter.open(name);
  const redis = new Redis(process.env.REDIS_URL!);
  return {
    read: async () => Number((await redis.get(name)) ?? 0),
    write: async (value) => void (await redis.set(name, String(value))),
    record: async (value, fencingToken) => void (await redis.rpush(`${name}:history`, `${value}:${fencingToken}`)),
    close: async () => redis.disconnect(),
  };
}

class PostgresCounter implements SharedCounter {
  private constructor(
    private readonly pool: Pool,
    private readonly name: string,
  ) {}

  static async open(name: string): Promise<PostgresCounter> {
    const pool = new Pool({ connectionString: process.env.LOCK_TEST_POSTGRES_URL!, max: 2 });
    await pool.query(`CREATE TABLE IF NOT EXISTS worker_counters (name text PRIMARY KEY, value bigint NOT NULL)`).catch(() => undefined);
    await pool.query(`CREATE TABLE IF NOT EXISTS worker_history (name text NOT NULL, value bigint NOT NULL, fence bigint NOT NULL)`).catch(() => undefined);
    return new PostgresCounter(pool, name);
  }

  async read(): Promise<number> {
    const { rows } = await this.pool.query(`SELECT value FROM worker_counters WHERE name = $1`, [this.name]);
    return rows[0] ? Number(rows[0].value) : 0;
  }

  async write(value: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO worker_counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      [this.name, value],
    );
  }

  async record(value: number, fencingToken: number): Promise<void> {
    await this.pool.query(`INSERT INTO worker_history (name, value, fence) VALUES ($1, $2, $3)`, [this.name, value, fencingToken]);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
