import type { Instance } from './instance-cluster.js';
import { COLD_ORDERS, HOT_ORDERS } from './seed-orders.js';

export interface InstanceTraffic {
  requests: number;
  ok: number;
  conflicts: number;
  errors: number;
}

/**
 * Virtual clients paying orders as fast as they get answers, spread round-robin over the instances that
 * are not paused: 70 % of requests go to a few hot orders (heavy contention), the rest to many cold ones.
 */
export class LoadDriver {
  readonly traffic = new Map<string, InstanceTraffic>();
  private next = 0;
  private stopped = false;

  constructor(private readonly instances: Instance[]) {
    for (const instance of instances) this.traffic.set(instance.name, { requests: 0, ok: 0, conflicts: 0, errors: 0 });
  }

  run(concurrency: number): Promise<void> {
    return Promise.all(Array.from({ length: concurrency }, () => this.client())).then(() => undefined);
  }

  stop(): void {
    this.stopped = true;
  }

  total(): InstanceTraffic {
    const sum: InstanceTraffic = { requests: 0, ok: 0, conflicts: 0, errors: 0 };
    for (const t of this.traffic.values()) {
      sum.requests += t.requests;
      sum.ok += t.ok;
      sum.conflicts += t.conflicts;
      sum.errors += t.errors;
    }
    return sum;
  }

  private async client(): Promise<void> {
    while (!this.stopped) {
      const running = this.instances.filter((instance) => !instance.paused);
      const instance = running[this.next++ % running.length]!;
      const orders = Math.random() < 0.7 ? HOT_ORDERS : COLD_ORDERS;
      const orderId = orders[Math.floor(Math.random() * orders.length)]!;
      const traffic = this.traffic.get(instance.name)!;
      traffic.requests++;
      try {
        const response = await fetch(`${instance.url}/orders/${orderId}/pay`, {
          method: 'POST',
          signal: AbortSignal.timeout(20_000),
        });
        await response.arrayBuffer();
        if (response.status === 200) traffic.ok++;
        else if (response.status === 409) traffic.conflicts++;
        else traffic.errors++;
      } catch {
        traffic.errors++;
      }
    }
  }
}
