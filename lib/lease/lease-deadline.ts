/**
 * Redlock's allowance for the store's clock running faster than ours: 1 % of the TTL plus 2 ms. Local
 * deadlines err early, so a holder learns of a lapse before another owner could be granted the key.
 */
export function clockDriftMs(ttlMs: number): number {
  return Math.floor(ttlMs * 0.01) + 2;
}

/**
 * A lease's local view of its expiry: from the send time of the last grant or renewal that got through,
 * plus the TTL it started. The deadline (when the lease counts as lost unless renewed) is that expiry less
 * the drift of the TTL counted: 1 % of a long lease can exceed a hand-off's short TTL.
 */
export class LeaseDeadline {
  /** Epoch ms: the store's TTL ends no earlier than this, unless renewed. */
  expiresAt = 0;
  /** Epoch ms: the lease counts as lost from here on, unless renewed. */
  lossAt = 0;

  /** A grant or renewal sent at `sentAt` started a TTL of `ttlMs` in the store. */
  restart(sentAt: number, ttlMs: number): void {
    this.expiresAt = sentAt + ttlMs;
    this.lossAt = this.expiresAt - clockDriftMs(ttlMs);
  }

  passed(now = Date.now()): boolean {
    return now >= this.lossAt;
  }
}
