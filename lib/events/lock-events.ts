import { EventEmitter } from 'node:events';
import { Injectable, Logger } from '@nestjs/common';
import { LOCK_EVENT_CHANNELS } from './lock-event.channels.js';
import type { LockEventMap, LockEventName } from './lock-event.types.js';

/**
 * The observability seam: logging, metrics and tests subscribe here. Listeners run synchronously inside
 * the lock's code paths, so a listener that throws is logged and ignored rather than breaking a lease.
 *
 * Every event is also published on `node:diagnostics_channel` (see `lockEventChannelName`), for tools that
 * subscribe process-wide without a Nest handle.
 */
@Injectable()
export class LockEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly logger = new Logger('DistributedLock');
  /** Listeners per event, kept here so that asking costs no walk through the emitter's internals. */
  private readonly listening: Partial<Record<LockEventName, number>> = {};

  /** Subscribes to one event; returns the function that unsubscribes. */
  on<E extends LockEventName>(event: E, listener: (payload: LockEventMap[E]) => void): () => void {
    this.emitter.on(event, listener);
    this.listening[event] = (this.listening[event] ?? 0) + 1;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.emitter.off(event, listener);
      this.listening[event]!--;
    };
  }

  /**
   * @internal Whether anyone listens to `event`, here or on its diagnostics channel. Hot paths ask first,
   * so that an event nobody listens to costs them not even the closure that would build it.
   */
  wants(event: LockEventName): boolean {
    return (this.listening[event] ?? 0) > 0 || LOCK_EVENT_CHANNELS[event].hasSubscribers;
  }

  /**
   * @internal The payload is built only when someone listens, here or on the event's diagnostics channel:
   * with 10 000 leases the watchdog would otherwise allocate an event per lease per interval for nobody.
   */
  emit<E extends LockEventName>(event: E, build: () => LockEventMap[E]): void {
    const channel = LOCK_EVENT_CHANNELS[event];
    const listeners = this.emitter.listenerCount(event);
    if (listeners === 0 && !channel.hasSubscribers) return;
    const payload = build();
    // A channel subscriber that throws is Node's to report (asynchronously); it cannot break the lease.
    if (channel.hasSubscribers) channel.publish(payload);
    if (listeners === 0) return;
    for (const listener of this.emitter.listeners(event)) {
      try {
        (listener as (value: LockEventMap[E]) => void)(payload);
      } catch (error) {
        this.logger.error(`A "${event}" listener threw; the lock is unaffected.`, error instanceof Error ? error.stack : error);
      }
    }
  }
}
