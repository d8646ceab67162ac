import { EventEmitter } from 'node:events';
import { Injectable, Logger } from '@nestjs/common';
import type { LeaseLostReason } from '../errors/lease-lost.error.js';

interface LeaseEvent {
  readonly key: string;
  readonly fencingToken: number;
  /** Short digest of the ownership token; the token itself never leaves the lease. */
  readonly tokenDigest: string;
}

export interface LockAcquiredEvent extends LeaseEvent {
  readonly waitedMs: number;
  /** Store calls this acquisition took; 1 when the key was free. */
  readonly attempts: number;
}
export interface LockReleasedEvent extends LeaseEvent {
  readonly heldMs: number;
  /** How long the key stays taken after release because of `minHoldMs`. */
  readonly keptMs: number;
}
export interface LockRenewedEvent extends LeaseEvent {
  readonly expiresAt: number;
}
export interface LockRenewFailedEvent extends LeaseEvent {
  readonly error: unknown;
}
export interface LockLostEvent extends LeaseEvent {
  readonly reason: LeaseLostReason;
}
export interface LockReleaseFailedEvent extends LeaseEvent {
  readonly error: unknown;
}
export interface LockContentionEvent {
  readonly key: string;
  /** Remaining lease of the current holder, -1 when unknown. */
  readonly holderTtlMs: number;
}

export interface LockEventMap {
  acquired: LockAcquiredEvent;
  released: LockReleasedEvent;
  renewed: LockRenewedEvent;
  'renew-failed': LockRenewFailedEvent;
  lost: LockLostEvent;
  'release-failed': LockReleaseFailedEvent;
  contention: LockContentionEvent;
}

export type LockEventName = keyof LockEventMap;

/**
 * The observability seam: logging, metrics and tests subscribe here. Listeners run synchronously inside
 * the lock's code paths, so a listener that throws is logged and ignored rather than breaking a lease.
 */
@Injectable()
export class LockEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly logger = new Logger('DistributedLock');

  /** Subscribes to one event; returns the function that unsubscribes. */
  on<E extends LockEventName>(event: E, listener: (payload: LockEventMap[E]) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  /**
   * @internal The payload is built only when someone listens: with 10 000 leases the watchdog would
   * otherwise allocate an event per lease per interval for nobody.
   */
  emit<E extends LockEventName>(event: E, build: () => LockEventMap[E]): void {
    if (this.emitter.listenerCount(event) === 0) return;
    const payload = build();
    for (const listener of this.emitter.listeners(event)) {
      try {
        (listener as (value: LockEventMap[E]) => void)(payload);
      } catch (error) {
        this.logger.error(`A "${event}" listener threw; the lock is unaffected.`, error instanceof Error ? error.stack : error);
      }
    }
  }
}
