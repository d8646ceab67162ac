import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../scripts/servers/etcd-server';
import { EtcdKeyLayout } from '../../lib/stores/etcd/etcd-key-layout';

/** A plain etcd3 client for looking at what the store wrote (never for taking locks). */
export function openObserver(cluster: EtcdCluster): Etcd3 {
  return new Etcd3({ hosts: cluster.endpoints });
}

/** The waiter keys of one lock, in queue order (holder first), with the holder name each one carries. */
export async function queueOf(observer: Etcd3, keyPrefix: string, key: string): Promise<Array<{ holder: string; createRevision: number }>> {
  const { key: start, range_end } = new EtcdKeyLayout(keyPrefix).lockRange(key);
  const reply = await observer.kv.range({ key: start, range_end, sort_order: 'Ascend', sort_target: 'Create' });
  return reply.kvs.map((kv) => ({
    holder: (JSON.parse(kv.value.toString()) as { holder: string }).holder,
    createRevision: Number(kv.create_revision),
  }));
}

/** Polls a condition the server exposes (queue length, a count), bounded and named: see pollUntil. */
export { pollUntil } from '../support/until';

type TxnRequest = Parameters<Etcd3['kv']['txn']>[0];
type RangeRequest = Parameters<Etcd3['kv']['range']>[0];

/** A transaction that re-attaches an existing key to another lease: how the store extends and holds leases. */
export function isLeaseMove(request: TxnRequest): boolean {
  const put = request.success?.length === 1 && request.success[0]!.request_put !== undefined;
  return put && (request.compare ?? []).some((compare) => compare.target === 'Create' && Number(compare.create_revision) > 0);
}

/** A single attempt: puts the waiter key only if the lock's range is empty (create revision 0). */
export function isAcquire(request: TxnRequest): boolean {
  return (request.compare ?? []).some((compare) => compare.target === 'Create' && compare.result === 'Equal' && Number(compare.create_revision) === 0);
}

/** A reply held back on its way to the caller; the request itself reached etcd and took effect. */
export interface HeldReply {
  /** Resolves once etcd applied the request (and answered: the answer is what is held back). */
  readonly landed: Promise<void>;
  /** Lets the answer through, late: the caller has given up on it by then. */
  deliver(): void;
}

/** What one transaction's answer carried: how many keys, how many of them with their values. */
export interface TxnRead {
  /** The transaction may put a key (an enqueue, an attempt), as opposed to a read of the queue. */
  readonly puts: boolean;
  readonly keys: number;
  readonly values: number;
}

/** A request stopped on its way to etcd: none of it has reached etcd until `send()`. */
export interface PausedRequest<R> {
  /** Resolves with the request once the caller sent it; it now waits here. */
  readonly reached: Promise<R>;
  /** Lets the request go on to etcd. */
  send(): void;
}

type Pause<R> = { matches: (request: R) => boolean; reached: (request: R) => void; gate: Promise<void> };

function pause<R>(matches: (request: R) => boolean): [Pause<R>, PausedRequest<R>] {
  let reached!: (request: R) => void;
  let send!: () => void;
  const gate = new Promise<void>((resolve) => (send = resolve));
  const paused: PausedRequest<R> = { reached: new Promise<R>((resolve) => (reached = resolve)), send };
  return [{ matches, reached, gate }, paused];
}

/**
 * Network-fault injection on a real client that a store is handed (nothing about locks is simulated):
 * the reply to one chosen transaction is held back while the transaction itself reaches etcd and takes
 * effect (an answer lost or late on its way back), one chosen request is stopped before it leaves (so a
 * test can act between two requests of one call), the next reads fail as if the member were
 * unreachable, and every lease revoke the client sends is tracked, so a test can wait until those sent
 * so far were answered instead of guessing how long they take.
 */
export class EtcdTap {
  readonly client: Etcd3;
  private holdNext?: { matches: (request: TxnRequest) => boolean; landed: () => void; gate: Promise<void> };
  private pausedTxn?: Pause<TxnRequest>;
  private pausedRange?: Pause<RangeRequest>;
  private failingRanges = 0;
  private refusingRevokes = false;
  private afterTtl?: (leaseId: string) => Promise<unknown>;
  private readonly revokes = new Set<Promise<unknown>>();
  private reads?: TxnRead[];

  constructor(cluster: EtcdCluster) {
    this.client = new Etcd3({ hosts: cluster.endpoints });
    const kv = this.client.kv;
    const txn = kv.txn.bind(kv);
    const range = kv.range.bind(kv);
    kv.txn = async (request, options) => {
      const paused = this.pausedTxn;
      if (paused?.matches(request)) {
        this.pausedTxn = undefined;
        paused.reached(request);
        await paused.gate;
      }
      const held = this.holdNext;
      if (!held?.matches(request)) {
        const reply = await txn(request, options);
        this.record(request, reply);
        return reply;
      }
      this.holdNext = undefined;
      // No deadline: the request must land whatever the caller's timeout, as one stuck on the way back does.
      const reply = await txn(request);
      held.landed();
      await held.gate;
      return reply;
    };
    kv.range = async (request, options) => {
      const paused = this.pausedRange;
      if (paused?.matches(request)) {
        this.pausedRange = undefined;
        paused.reached(request);
        await paused.gate;
      }
      if (this.failingRanges > 0) {
        this.failingRanges--;
        throw new Error('14 UNAVAILABLE: injected: the member did not answer');
      }
      return range(request, options);
    };
    const leases = this.client.leaseClient;
    const revoke = leases.leaseRevoke.bind(leases);
    leases.leaseRevoke = (request, options) => {
      const answered = this.refusingRevokes ? Promise.reject(new Error('14 UNAVAILABLE: injected: the member did not answer')) : revoke(request, options);
      const tracked = answered.catch(() => undefined);
      this.revokes.add(tracked);
      void tracked.finally(() => this.revokes.delete(tracked));
      return answered;
    };
    const timeToLive = leases.leaseTimeToLive.bind(leases);
    leases.leaseTimeToLive = async (request, options) => {
      const reply = await timeToLive(request, options);
      const hook = this.afterTtl;
      this.afterTtl = undefined;
      await hook?.(String(request.ID));
      return reply;
    };
  }

  /** Runs `hook` (say, revoking that lease elsewhere) after the next lease TTL read is answered, before its caller sees it. */
  afterNextTtlRead(hook: (leaseId: string) => Promise<unknown>): void {
    this.afterTtl = hook;
  }

  /** The next transaction that `matches` lands in etcd, but its answer reaches the caller only at `deliver()`. */
  holdReplyTo(matches: (request: TxnRequest) => boolean): HeldReply {
    let landed!: () => void;
    let deliver!: () => void;
    const gate = new Promise<void>((resolve) => (deliver = resolve));
    const reply: HeldReply = { landed: new Promise<void>((resolve) => (landed = resolve)), deliver };
    this.holdNext = { matches, landed, gate };
    return reply;
  }

  /** Stops the next transaction (or range read) that `matches` before it is sent, until `send()`. */
  pauseBefore(kind: 'txn', matches: (request: TxnRequest) => boolean): PausedRequest<TxnRequest>;
  pauseBefore(kind: 'range', matches: (request: RangeRequest) => boolean): PausedRequest<RangeRequest>;
  pauseBefore(
    kind: 'txn' | 'range',
    matches: ((request: TxnRequest) => boolean) | ((request: RangeRequest) => boolean),
  ): PausedRequest<TxnRequest> | PausedRequest<RangeRequest> {
    if (kind === 'txn') {
      const [next, paused] = pause(matches as (request: TxnRequest) => boolean);
      this.pausedTxn = next;
      return paused;
    }
    const [next, paused] = pause(matches as (request: RangeRequest) => boolean);
    this.pausedRange = next;
    return paused;
  }

  /** From now on, what each transaction answered on this client read (a live list), until `stop()`. */
  recordTxnReads(): { readonly txns: readonly TxnRead[]; stop(): void } {
    const txns: TxnRead[] = [];
    this.reads = txns;
    return { txns, stop: () => void (this.reads = undefined) };
  }

  private record(request: TxnRequest, reply: Awaited<ReturnType<Etcd3['kv']['txn']>>): void {
    if (!this.reads) return;
    const kvs = reply.responses.flatMap((response) => response.response_range?.kvs ?? []);
    const puts = [...(request.success ?? []), ...(request.failure ?? [])].some((op) => op.request_put !== undefined);
    this.reads.push({ puts, keys: kvs.length, values: kvs.filter((kv) => kv.value.length > 0).length });
  }

  /** The next `count` reads (kv range requests) fail at once with a gRPC UNAVAILABLE error. */
  failReads(count: number): void {
    this.failingRanges = count;
  }

  /** While on, every lease revoke fails at once with a gRPC UNAVAILABLE error (etcd out of reach). */
  refuseRevokes(on: boolean): void {
    this.refusingRevokes = on;
  }

  /** Resolves once every lease revoke this client sent so far has its answer. */
  async revokesAnswered(): Promise<void> {
    while (this.revokes.size > 0) await Promise.all([...this.revokes]);
  }

  close(): void {
    this.client.close();
  }
}
