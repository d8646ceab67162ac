import type { DynamicModule, INestApplication, LoggerService, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { DistributedLockModule, LOCK_EVENT_NAMES, LockEvents, LockService, type LockEventMap, type LockEventName, type LockModuleOptions } from '../../lib/index';
import { redisUrl } from '../support/test-prefix';

export interface LockedAppOptions {
  readonly lock: LockModuleOptions;
  readonly providers?: Provider[];
  readonly controllers?: Type<unknown>[];
  readonly imports?: Array<Type<unknown> | DynamicModule>;
  /** Only compile: no `init()` (to call locked methods before the application is initialised). */
  readonly compileOnly?: boolean;
  /** Receives Nest's log output; silent by default. */
  readonly logger?: LoggerService;
}

export interface LockedApp {
  readonly app: INestApplication;
  get<T>(type: Type<T> | symbol | string): T;
  recorded<E extends LockEventName>(event: E): LockEventMap[E][];
  next<E extends LockEventName>(event: E, predicate?: (payload: LockEventMap[E]) => boolean): Promise<LockEventMap[E]>;
  close(): Promise<void>;
}

const EVENTS = LOCK_EVENT_NAMES;

/** A real Nest application (HTTP-capable) with the lock module configured like a user would. */
export async function startLockedApp(options: LockedAppOptions): Promise<LockedApp> {
  const metadata: ModuleMetadata = {
    imports: [DistributedLockModule.forRoot(options.lock), ...(options.imports ?? [])],
    providers: options.providers ?? [],
    controllers: options.controllers ?? [],
  };
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication({ logger: options.logger ?? false });
  const log = new Map<LockEventName, unknown[]>(EVENTS.map((name) => [name, []]));
  if (!options.compileOnly) {
    try {
      await app.init();
    } catch (error) {
      // Nest's close() rethrows the failed init without running shutdown hooks, but the store already
      // opened its connection: shut the lock service down directly so the file can end.
      await app.get(LockService).onApplicationShutdown().catch(() => undefined);
      throw error;
    }
    const events = app.get(LockEvents);
    for (const name of EVENTS) events.on(name, (payload) => log.get(name)!.push(payload));
  }
  return {
    app,
    get: (type) => app.get(type as never),
    recorded: (event) => log.get(event) as never,
    next: (event, predicate = () => true) =>
      new Promise((resolve) => {
        const off = app.get(LockEvents).on(event, (payload) => {
          if (!predicate(payload)) return;
          off();
          resolve(payload);
        });
      }),
    close: () => app.close(),
  };
}

/** Redis options for a test file's apps. */
export function redisLock(keyPrefix: string, extra: Partial<LockModuleOptions> = {}): LockModuleOptions {
  return { redis: redisUrl(), keyPrefix, ...extra };
}

/** A plain client for looking at what the lock store wrote. */
export function inspectionClient(): Redis {
  return new Redis(redisUrl(), { lazyConnect: false, maxRetriesPerRequest: 1 });
}

/** A promise with its resolver, to hold a locked method open until the test lets it go. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Every key under `prefix` currently in Redis. */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.filter((key) => !key.slice(prefix.length).startsWith('#'));
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** A Nest logger that keeps error lines, to prove that nothing failed where Nest only logs failures. */
export function errorCollectingLogger(): LoggerService & { readonly errors: unknown[][] } {
  const errors: unknown[][] = [];
  const ignore = (): void => undefined;
  return { errors, error: (...args: unknown[]) => errors.push(args), log: ignore, warn: ignore, debug: ignore, verbose: ignore, fatal: (...args: unknown[]) => errors.push(args) };
}
