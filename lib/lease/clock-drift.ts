/**
 * Redlock's allowance for the store's clock running faster than ours: 1 % of the lease plus 2 ms. Local
 * deadlines err early, so a holder learns of a lapse before another owner could be granted the key.
 */
export function clockDriftMs(leaseMs: number): number {
  return Math.floor(leaseMs * 0.01) + 2;
}
