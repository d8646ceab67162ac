import { Redis } from 'ioredis';
import { Pool, type PoolClient } from 'pg';
import { fencedWrite, StaleFencingTokenError } from '../../lib/index';

/** What one read-modify-write step found at the register. */
export interface RegisterWrite {
  readonly accepted: boolean;
  /** The value the register held when the write arrived (equal to what the section read, unless another write came between). */
  readonly before: number;
  /** The fence stored when the write was refused. */
  readonly stored?: number;
}

/** Where a PostgreSQL write runs: the pool, or the client of the transaction the section runs in. */
export type Queryable = Pick<PoolClient, 'query'>;

/**
 * The resource every protected section writes through, outside the faults: a counter per lock key that
 * accepts a write only if the section's fencing token is at least the one stored (the same lease may write
 * again), checked and applied in one atomic step, and that tells the value it replaced. A section reads,
 * waits a little, and writes read + 1: two holders at once show up as a write whose `before` differs from
 * what it read (a lost update), or as a write refused by its fence. Goes through the library's
 * `fencedWrite`, as users' own resources do, so a refused write is a `StaleFencingTokenError`.
 */
export interface FencedRegister {
  /**
   * The value, or undefined when a newer fence has already been here. On Redis the read is fenced too
   * (it raises the stored fence to the reader's): once a newer holder has read, an older one can neither
   * read nor write, so an overlap that the register fences cannot lose an update either.
   */
  read(key: string, fence: number, via?: Queryable): Promise<number | undefined>;
  write(key: string, fence: number, value: number, via?: Queryable): Promise<RegisterWrite>;
  close(): Promise<void>;
}

const READ = `
local cur = redis.call('HMGET', KEYS[1], 'v', 'f')
if tonumber(ARGV[1]) < tonumber(cur[2] or '0') then return false end
redis.call('HSET', KEYS[1], 'f', ARGV[1])
return cur[1] or '0'`;

// Fences are µs clocks on Redis (~1.8e15): compared as Lua doubles (exact below 2^53) but returned as the
// stored strings, never through tostring (%.14g would round them).
const WRITE = `
local cur = redis.call('HMGET', KEYS[1], 'v', 'f')
local f = cur[2] or '0'
if tonumber(ARGV[1]) >= tonumber(f) then
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 'f', ARGV[1])
  return {1, cur[1] or '0', f}
end
return {0, cur[1] or '0', f}`;

/** The register on a private redis-server that no fault touches. */
export class RedisFencedRegister implements FencedRegister {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix: string) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 3 });
    this.redis.on('error', () => undefined);
  }

  async read(key: string, fence: number): Promise<number | undefined> {
    const value = (await this.redis.eval(READ, 1, this.prefix + key, String(fence))) as string | null;
    return value === null ? undefined : Number(value);
  }

  async write(key: string, fence: number, value: number): Promise<RegisterWrite> {
    let reply: [number, string, string] = [0, '0', '0'];
    try {
      await fencedWrite({
        resource: 'torture-register',
        fencedBy: fence,
        apply: async (token) => {
          reply = (await this.redis.eval(WRITE, 1, this.prefix + key, String(token), String(value))) as [number, string, string];
          return reply[0];
        },
        readFence: async () => reply[2],
      });
    } catch (error) {
      if (!(error instanceof StaleFencingTokenError)) throw error;
    }
    return { accepted: reply[0] === 1, before: Number(reply[1]), ...(reply[0] === 1 ? {} : { stored: Number(reply[2]) }) };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * The register as a PostgreSQL table, for the PostgreSQL case: a section that runs in a transaction writes
 * inside it (the row lock taken by `FOR UPDATE` orders concurrent writers, and the value becomes visible
 * at COMMIT), which is what release-after-commit protects. Rows are made before the run starts.
 */
export class PostgresFencedRegister implements FencedRegister {
  private readonly pool: Pool;

  constructor(url: string) {
    this.pool = new Pool({ connectionString: url, max: 6 });
    this.pool.on('error', () => undefined);
  }

  static async prepare(url: string, keys: readonly string[]): Promise<void> {
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      await pool.query(`CREATE TABLE IF NOT EXISTS torture_register (key text PRIMARY KEY, value bigint NOT NULL, fence bigint NOT NULL)`);
      await pool.query(`INSERT INTO torture_register (key, value, fence) SELECT unnest($1::text[]), 0, 0 ON CONFLICT DO NOTHING`, [keys]);
    } finally {
      await pool.end();
    }
  }

  /** A client for a transaction of the caller's own. */
  connect(): Promise<PoolClient> {
    return this.pool.connect();
  }

  /** A plain read: a release that came before COMMIT shows as a lost update, which a fenced read would hide behind its row lock. */
  async read(key: string, _fence: number, via: Queryable = this.pool): Promise<number> {
    const { rows } = await via.query<{ value: string }>(`SELECT value FROM torture_register WHERE key = $1`, [key]);
    return Number(rows[0]?.value ?? 0);
  }

  async write(key: string, fence: number, value: number, via: Queryable = this.pool): Promise<RegisterWrite> {
    let before = 0;
    let stored = 0;
    let accepted = false;
    try {
      await fencedWrite({
        resource: 'torture_register',
        fencedBy: fence,
        apply: async (token) => {
          // The row lock makes read-and-compare and the update one step against other writers.
          const { rows } = await via.query<{ value: string; fence: string }>(`SELECT value, fence FROM torture_register WHERE key = $1 FOR UPDATE`, [key]);
          before = Number(rows[0]?.value ?? 0);
          stored = Number(rows[0]?.fence ?? 0);
          if (token < stored) return 0;
          await via.query(`UPDATE torture_register SET value = $2, fence = $3 WHERE key = $1`, [key, value, token]);
          accepted = true;
          return 1;
        },
        readFence: async () => stored,
      });
    } catch (error) {
      if (!(error instanceof StaleFencingTokenError)) throw error;
    }
    return { accepted, before, ...(accepted ? {} : { stored }) };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
