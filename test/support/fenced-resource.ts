import { Client } from 'pg';

/**
 * A row in PostgreSQL that accepts a write only with a fencing token greater than the last one applied:
 * the final arbiter the seeds ask for, since no lease can stop a holder that does not know it lost it.
 */
export class FencedResource {
  private constructor(private readonly db: Client) {}

  static async create(databaseUrl: string): Promise<FencedResource> {
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    await db.query(`CREATE TABLE IF NOT EXISTS fenced (id text PRIMARY KEY, value text, last_token bigint NOT NULL)`);
    return new FencedResource(db);
  }

  /** True when the write was applied, false when an equal or newer token had already written. */
  async write(id: string, value: string, fencingToken: number): Promise<boolean> {
    const result = await this.db.query(
      `INSERT INTO fenced (id, value, last_token) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET value = excluded.value, last_token = excluded.last_token
       WHERE fenced.last_token < excluded.last_token`,
      [id, value, fencingToken],
    );
    return result.rowCount === 1;
  }

  async read(id: string): Promise<{ value: string; lastToken: number } | undefined> {
    const { rows } = await this.db.query<{ value: string; last_token: string }>(`SELECT value, last_token FROM fenced WHERE id = $1`, [id]);
    return rows[0] && { value: rows[0].value, lastToken: Number(rows[0].last_token) };
  }

  close(): Promise<void> {
    return this.db.end();
  }
}
