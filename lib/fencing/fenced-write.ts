import { resolveFencedBy, type FencedBy } from './fenced-by.js';
import { staleFencingToken } from './stale-fencing-token.channel.js';

/**
 * One write guarded by a fencing token, for any resource: the SQL, TypeORM and Drizzle helpers are built on
 * it, and so can one for another database. The resource must check the token in the same atomic step as
 * the write (a conditional update); checking first and writing after is the race fencing exists to close.
 */
export interface FencedWrite {
  /** What is written (a table name); names the resource in errors and events, so keep it low-cardinality. */
  readonly resource: string;
  /** The lease the write runs under (or its `fencingToken`). */
  readonly fencedBy: FencedBy;
  /**
   * Applies the write only where the stored fence is absent or not newer than `fencingToken` (the same
   * lease may write a record more than once), storing the token with it, atomically. Resolves with the number of records written.
   */
  apply(fencingToken: number): Promise<number>;
  /**
   * Called only when `apply` wrote nothing: the highest fence now stored on the targeted records (a number,
   * or a bigint column's string), or null/undefined when none exists or none carries a token yet.
   */
  readFence(): Promise<unknown>;
  /**
   * Names the helper in the published event.
   * @default 'custom'
   */
  readonly helper?: string;
}

/**
 * Runs a {@link FencedWrite}. Resolves with the records written; 0 when no record matched or a
 * compare-and-set condition of the write failed under a current token. A record already carrying a newer
 * token (a newer holder wrote it) rejects with `StaleFencingTokenError`, published first on the stale-fencing-token
 * channel (see `onStaleFencingToken`).
 */
export async function fencedWrite(write: FencedWrite): Promise<number> {
  const { fencingToken, lockKey } = resolveFencedBy(write.fencedBy);
  const written = await write.apply(fencingToken);
  if (written > 0) return written;
  const current = fenceNumber(await write.readFence());
  if (current === null || current <= fencingToken) return 0;
  throw staleFencingToken({
    resource: write.resource,
    fencingToken,
    currentFencingToken: current,
    lockKey,
    helper: write.helper ?? 'custom',
  });
}

/** Drivers return bigint columns as strings (pg) or bigints; tokens stay below 2^53, so a number is exact. */
function fenceNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const token = Number(value);
  return Number.isFinite(token) ? token : null;
}
