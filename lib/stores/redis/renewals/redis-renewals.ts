import type { Cluster } from 'ioredis';
import { LockStoreUnavailableError } from '../../../errors/lock-store-unavailable.error.js';
import type { RenewOutcome, RenewRequest } from '../../lock-store.interface.js';
import type { RedisCommands } from '../commands/redis-commands.js';
import type { RedisConnection } from '../connection/redis-connection.js';
import type { RedisKeyLayout } from '../redis-key-layout.js';
import { RENEW_MANY_SCRIPT, RENEW_ON_NODE_SCRIPT, type RenewEntry, type RenewReply } from '../scripts/renew-many.script.js';
import { keySlot } from '../key-slot.js';

/** Keeps one renew call's argument list well below Redis' limits and its run time short. */
const MAX_RENEW_BATCH = 1000;

interface IndexedEntry extends RenewEntry {
  readonly index: number;
  readonly key: string;
}

interface Batch {
  readonly entries: IndexedEntry[];
  /** Cluster batches run the per-node script; single-node ones declare every key. */
  readonly perNode: boolean;
}

/**
 * The watchdog's batched renewals on Redis. One call per batch of up to 1000 leases on a single server;
 * on a Cluster one call per node (not per hash slot) thanks to Redis 7's cross-slot scripts, falling back
 * to one per slot on servers that do not know them. Every batch stands alone: a node that fails leaves its
 * own requests unknown (an Error each, retried by the watchdog), never the other nodes' results. With
 * `replicas`, a renewal counts only once they acknowledged it (`RedisCommands.runAcknowledged`).
 */
export class RedisRenewals {
  private crossSlotScripts = true;

  constructor(
    private readonly connection: RedisConnection,
    private readonly commands: RedisCommands,
    private readonly layout: RedisKeyLayout,
  ) {}

  async renew(requests: readonly RenewRequest[]): Promise<RenewOutcome[]> {
    const results = new Array<RenewOutcome>(requests.length);
    const entries = requests.map(({ key, token, leaseMs }, index) => ({ index, key, lockKey: this.layout.lockKey(key), token, leaseMs }));
    await Promise.all(this.batches(entries).map((batch) => this.renewBatch(batch, results)));
    return results;
  }

  private async renewBatch(batch: Batch, results: RenewOutcome[]): Promise<void> {
    const { acknowledgement } = this.commands;
    const first = batch.entries[0]!;
    const script = batch.perNode ? RENEW_ON_NODE_SCRIPT : RENEW_MANY_SCRIPT;
    const described = describeBatch(batch.entries);
    let replies: RenewReply[];
    let acknowledged = 0;
    let waitRefused: string | undefined;
    try {
      if (acknowledgement) ({ result: replies, acknowledged, waitRefused } = await this.commands.runAcknowledged('renew', described, script, batch.entries));
      else replies = await this.commands.runScript('renew', described, script, batch.entries);
    } catch (error) {
      if (batch.perNode && this.crossSlotScripts && isUnknownShebang(error)) {
        // Redis before 7.0: one call per slot, as before.
        this.crossSlotScripts = false;
        await Promise.all(this.bySlot(batch.entries).map((slotBatch) => this.renewBatch(slotBatch, results)));
        return;
      }
      for (const entry of batch.entries) results[entry.index] = error as Error;
      return;
    }
    // Named in errors only (on a Cluster it costs a slot lookup): not made for every batch.
    const server = (): string => this.connection.server(first.lockKey);
    const unacknowledged = waitRefused
      ? `the renewal went through, but WAIT was refused (${waitRefused})`
      : acknowledgement && acknowledged < acknowledgement.replicas
        ? `${server()} renewed, but only ${acknowledged} of ${acknowledgement.replicas} replica(s) acknowledged within ${acknowledgement.timeoutMs} ms`
        : undefined;
    let moved = false;
    const toConfirm: IndexedEntry[] = [];
    batch.entries.forEach((entry, i) => {
      const answer = replies[i];
      if (answer === 'not-ours' && batch.perNode && i > 0) {
        // The node that answered is the one the batch's first key was routed to; during a slot migration
        // (ASK) that is the importing node, where a key still on the source reads as missing. Only the
        // key's own call can tell "not ours" from "elsewhere": asked once more, by itself.
        toConfirm.push(entry);
      } else if (answer === 'not-ours') {
        results[entry.index] = false;
      } else if (answer === 'renewed' && !unacknowledged) {
        results[entry.index] = true;
      } else {
        moved ||= answer === 'elsewhere';
        const why = answer === 'elsewhere' ? `${server()} no longer serves the key's hash slot` : unacknowledged!;
        results[entry.index] = new LockStoreUnavailableError('renew', entry.key, { cause: new Error(why) });
      }
    });
    // Slots moved since the client last looked: refresh, so the watchdog's retry goes to the right nodes.
    if (moved) (this.connection.client as Cluster).refreshSlotsCache();
    // Each routed by its own key (it declares it): MOVED and ASK take it to the node that has it.
    await Promise.all(toConfirm.map((entry) => this.renewBatch({ entries: [entry], perNode: false }, results)));
  }

  private batches(entries: IndexedEntry[]): Batch[] {
    const { client } = this.connection;
    if (!client.isCluster) return chunks(entries, false);
    if (!this.crossSlotScripts) return this.bySlot(entries);
    const slots = (client as Cluster).slots;
    const groups = new Map<string, IndexedEntry[]>();
    for (const entry of entries) {
      const slot = keySlot(entry.lockKey);
      // Before the slot map is known (first call), group by slot: the routing key finds the node.
      const group = slots[slot]?.[0] ?? `slot:${slot}`;
      const list = groups.get(group);
      if (list) list.push(entry);
      else groups.set(group, [entry]);
    }
    return [...groups.values()].flatMap((list) => chunks(list, true));
  }

  private bySlot(entries: IndexedEntry[]): Batch[] {
    const groups = new Map<number, IndexedEntry[]>();
    for (const entry of entries) {
      const slot = keySlot(entry.lockKey);
      const list = groups.get(slot);
      if (list) list.push(entry);
      else groups.set(slot, [entry]);
    }
    return [...groups.values()].flatMap((list) => chunks(list, false));
  }
}

function chunks(entries: IndexedEntry[], perNode: boolean): Batch[] {
  const batches: Batch[] = [];
  for (let i = 0; i < entries.length; i += MAX_RENEW_BATCH) batches.push({ entries: entries.slice(i, i + MAX_RENEW_BATCH), perNode });
  return batches;
}

function describeBatch(batch: readonly IndexedEntry[]): string {
  return batch.length === 1 ? batch[0]!.key : `${batch.length} leases starting with ${batch[0]!.key}`;
}

/** Redis before 7.0 reads the `#!lua` line as Lua and fails to compile it. */
function isUnknownShebang(error: unknown): boolean {
  const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : '';
  return /near '#'|shebang/i.test(cause);
}
