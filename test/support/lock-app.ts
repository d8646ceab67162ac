import { Test } from '@nestjs/testing';
import { DistributedLockModule, LOCK_EVENT_NAMES, LockEvents, LockService, LockStore, type LockModuleOptions } from '../../lib/index';
import type { LockEventMap, LockEventName } from '../../lib/index';

export interface LockApp {
  readonly locks: LockService;
  readonly events: LockEvents;
  readonly store: LockStore;
  /** Every event of the given kind emitted so far. */
  recorded<E extends LockEventName>(event: E): LockEventMap[E][];
  /** Resolves with the next event of that kind matching `predicate`. */
  next<E extends LockEventName>(event: E, predicate?: (payload: LockEventMap[E]) => boolean): Promise<LockEventMap[E]>;
  close(): Promise<void>;
}

const EVENTS = LOCK_EVENT_NAMES;

/** A Nest application context with only the lock module, configured like a user would. */
export async function createLockApp(options: LockModuleOptions): Promise<LockApp> {
  const moduleRef = await Test.createTestingModule({ imports: [DistributedLockModule.forRoot(options)] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const events = app.get(LockEvents);
  const log = new Map<LockEventName, unknown[]>(EVENTS.map((name) => [name, []]));
  for (const name of EVENTS) events.on(name, (payload) => log.get(name)!.push(payload));
  return {
    locks: app.get(LockService),
    events,
    store: app.get<LockStore>(LockStore),
    recorded: (event) => log.get(event) as never,
    next: (event, predicate = () => true) =>
      new Promise((resolve) => {
        const off = events.on(event, (payload) => {
          if (!predicate(payload)) return;
          off();
          resolve(payload);
        });
      }),
    close: () => app.close(),
  };
}
