import { LockConfigError } from '../errors/lock-config.error.js';
import { LOCK_EVENT_NAMES as EVENT_NAMES, type LockEventMap, type LockEventName } from '../events/lock-event.types.js';
import type { LockEvents } from '../events/lock-events.js';

/** Which payloads to wait for: fields that must be equal (e.g. `{ key: 'order:1' }`), or a predicate. */
export type LockEventMatch<E extends LockEventName> = Partial<LockEventMap[E]> | ((payload: LockEventMap[E]) => boolean);

/** Options of {@link LockEventRecorder.next}. */
export interface WaitForEventOptions {
  /**
   * Reject with a message naming the event after this long, instead of leaving the test to its timeout.
   * @default 5000
   */
  readonly timeoutMs?: number;
}

function matcher<E extends LockEventName>(match: LockEventMatch<E> | undefined): (payload: LockEventMap[E]) => boolean {
  if (match === undefined) return () => true;
  if (typeof match === 'function') return match;
  const expected = Object.entries(match);
  return (payload) => expected.every(([field, value]) => (payload as unknown as Record<string, unknown>)[field] === value);
}

/** Records one application's lock events from its creation on, and waits for the next matching one. */
export class LockEventRecorder {
  private readonly log = new Map<LockEventName, unknown[]>(EVENT_NAMES.map((name) => [name, []]));
  private readonly unsubscribe: Array<() => void>;

  constructor(private readonly events: LockEvents) {
    this.unsubscribe = EVENT_NAMES.map((name) => events.on(name, (payload) => this.log.get(name)!.push(payload)));
  }

  /** Every event of that kind recorded so far (matching `match`, if given), oldest first. */
  recorded<E extends LockEventName>(event: E, match?: LockEventMatch<E>): LockEventMap[E][] {
    const list = this.log.get(event) as LockEventMap[E][] | undefined;
    if (!list) throw new LockConfigError('event', event, EVENT_NAMES.join(', '));
    return list.filter(matcher(match));
  }

  /**
   * The next event of that kind matching `match`, emitted after this call. Subscribe before causing it:
   * `const lost = kit.nextEvent('lost', { key }); …; await lost`.
   */
  next<E extends LockEventName>(event: E, match?: LockEventMatch<E>, options: WaitForEventOptions = {}): Promise<LockEventMap[E]> {
    if (!this.log.has(event)) throw new LockConfigError('event', event, EVENT_NAMES.join(', '));
    const matches = matcher(match);
    const timeoutMs = options.timeoutMs ?? 5_000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`No "${event}" lock event${match === undefined ? '' : ' matching the filter'} within ${timeoutMs} ms.`));
      }, timeoutMs);
      // A wait the test never awaited must not keep the process alive.
      timer.unref();
      const off = this.events.on(event, (payload) => {
        if (!matches(payload)) return;
        clearTimeout(timer);
        off();
        resolve(payload);
      });
    });
  }

  /** Forgets what was recorded (recording goes on). */
  clear(): void {
    for (const list of this.log.values()) list.length = 0;
  }

  /** Stops recording. */
  stop(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }
}
