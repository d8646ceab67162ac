import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Test } from '@nestjs/testing';
import { Propagation, Transactional, TransactionHost, ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import { Column, DataSource, Entity, PrimaryColumn, type Logger as TypeOrmLogger } from 'typeorm';
import { DistributedLock, DistributedLockModule, LockEvents, LockService, type LockModuleOptions } from '../../lib/index';
import { releaseLocksAfterCommit } from '../../lib/transactions/nestjs-cls/index';
import { startPostgresServer, type PostgresServer } from '../../scripts/servers/postgres-server';
import { redisUrl } from '../support/test-prefix';

@Entity('counters')
export class Counter {
  @PrimaryColumn('text')
  id!: string;

  @Column('int')
  value!: number;
}

/** One ordered log of what the database and the lock did, to compare COMMIT with the lock's release. */
export class Timeline {
  readonly entries: string[] = [];

  add(entry: string): void {
    this.entries.push(entry);
  }

  indexOf(entry: string, from = 0): number {
    return this.entries.indexOf(entry, from);
  }
}

class TimelineLogger implements TypeOrmLogger {
  constructor(private readonly timeline: Timeline) {}
  logQuery(query: string): void {
    if (/^(COMMIT|ROLLBACK|START TRANSACTION|SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT)/.test(query)) {
      this.timeline.add(query.replace(/ typeorm_\d+/, ''));
    }
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Read-modify-write of one counter row: read, wait, write value + 1. Two of these overlapping on the same
 * row lose an update, which is what the lock (released after commit) must prevent.
 */
@Injectable()
export class CounterService {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    readonly locks: LockService,
  ) {}

  async readModifyWrite(id: string): Promise<void> {
    const row = await this.txHost.tx.findOneByOrFail(Counter, { id });
    await pause(3);
    await this.txHost.tx.update(Counter, { id }, { value: row.value + 1 });
  }

  /** The caller's transaction encloses the lock; `afterLock` runs inside the transaction, after the scope. */
  @Transactional()
  async incrementInTransaction(id: string, afterLock: () => Promise<void> = () => pause(5)): Promise<void> {
    await this.locks.withLock(`counter:${id}`, { waitMs: 60_000 }, () => this.readModifyWrite(id));
    await afterLock();
  }

  @Transactional(Propagation.RequiresNew)
  async incrementInNewTransaction(id: string): Promise<void> {
    await this.locks.withLock(`counter:${id}`, { waitMs: 60_000 }, () => this.readModifyWrite(id));
  }

  @Transactional(Propagation.Nested)
  async incrementInSavepoint(id: string): Promise<void> {
    await this.locks.withLock(`counter:${id}`, { waitMs: 60_000 }, () => this.readModifyWrite(id));
  }

  /** Decorator order 1: the lock encloses the transaction, so it is released after the COMMIT anyway. */
  @DistributedLock({ key: 'counter:{id}', waitMs: 60_000 })
  @Transactional()
  async incrementLockOutside(id: string): Promise<void> {
    await this.readModifyWrite(id);
    await pause(5);
  }

  /** Decorator order 2: the transaction encloses the lock, whose release waits for the COMMIT. */
  @Transactional()
  @DistributedLock({ key: 'counter:{id}', waitMs: 60_000 })
  async incrementLockInside(id: string): Promise<void> {
    await this.readModifyWrite(id);
    await pause(5);
  }

  @Transactional()
  async outer(work: () => Promise<void>): Promise<void> {
    await work();
  }

  /** Decorator order 1 again, with a hook between the write and the COMMIT. */
  @DistributedLock({ key: 'counter:{id}', waitMs: 60_000 })
  @Transactional()
  async incrementLockOutsideThen(id: string, beforeCommit: () => Promise<void>): Promise<void> {
    await this.readModifyWrite(id);
    await beforeCommit();
  }

  // Two steps of one checkout, each locked on the same key; the transaction around them holds the first
  // step's lease until its COMMIT.
  @DistributedLock({ key: 'counter:{id}', waitMs: 1_000 })
  async reserve(id: string): Promise<void> {
    await this.readModifyWrite(id);
  }

  @DistributedLock({ key: 'counter:{id}', waitMs: 1_000 })
  async pay(id: string): Promise<void> {
    await this.readModifyWrite(id);
  }

  @DistributedLock({ key: 'counter:{id}', waitMs: 0, onLocked: 'skip' })
  async payOrSkip(id: string): Promise<string> {
    await this.readModifyWrite(id);
    return 'paid';
  }

  @Transactional(Propagation.Nested)
  @DistributedLock({ key: 'counter:{id}', waitMs: 1_000 })
  async reserveInFailingSavepoint(id: string): Promise<void> {
    await this.readModifyWrite(id);
    throw new Error('out of stock in this warehouse');
  }

  @Transactional()
  async checkout(id: string): Promise<void> {
    await this.reserve(id);
    await this.pay(id);
  }

  @Transactional()
  async checkoutInParallel(id: string): Promise<void> {
    await Promise.all([this.reserve(id), this.pay(id)]);
  }

  @Transactional()
  async checkoutOrSkip(id: string): Promise<string | undefined> {
    await this.reserve(id);
    return this.payOrSkip(id);
  }

  @Transactional()
  async checkoutAfterFailedSavepoint(id: string): Promise<void> {
    await this.reserveInFailingSavepoint(id).catch(() => undefined);
    await this.pay(id);
  }

  async value(id: string): Promise<number> {
    return (await this.txHost.tx.findOneByOrFail(Counter, { id })).value;
  }

  async reset(id: string): Promise<void> {
    await this.txHost.tx.upsert(Counter, { id, value: 0 }, ['id']);
  }
}

export interface CounterApp {
  readonly counters: CounterService;
  readonly events: LockEvents;
  readonly dataSource: DataSource;
  readonly timeline: Timeline;
  close(): Promise<void>;
}

/** A Nest app wired the way the README shows: TypeORM + @nestjs-cls/transactional + the lock module. */
export async function createCounterApp(databaseUrl: string, lockOptions: LockModuleOptions): Promise<CounterApp> {
  const timeline = new Timeline();
  const imports: DynamicModule[] = [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: databaseUrl,
      entities: [Counter],
      synchronize: true,
      logging: ['query'],
      logger: new TimelineLogger(timeline),
      extra: { max: 20 },
    }),
    ClsModule.forRoot({
      global: true,
      plugins: [
        new ClsPluginTransactional({
          adapter: releaseLocksAfterCommit(new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() })),
        }),
      ],
    }),
    DistributedLockModule.forRoot(lockOptions),
  ];

  @Module({ imports, providers: [CounterService] })
  class CounterModule {}

  const moduleRef = await Test.createTestingModule({ imports: [CounterModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const events = app.get(LockEvents);
  events.on('released', (e) => timeline.add(`released ${e.key}`));
  return {
    counters: app.get(CounterService),
    events,
    dataSource: app.get(DataSource),
    timeline,
    close: () => app.close(),
  };
}

/** The counter app of one `describe` block, with a private PostgreSQL and a Redis client beside it. */
export interface CounterSuite {
  readonly app: CounterApp;
  /** A plain client of the app's Redis, to take a key away from under it. */
  readonly redis: Redis;
}

/**
 * Starts PostgreSQL and the counter app before the block's tests and stops both after them (registers
 * `beforeAll`/`afterAll`/`beforeEach` in the calling `describe`); the timeline starts empty for each test.
 */
export function counterSuite(lockOptions: LockModuleOptions): CounterSuite {
  let postgres: PostgresServer | undefined;
  let app: CounterApp | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    postgres = await startPostgresServer();
    app = await createCounterApp(postgres.url, lockOptions);
    redis = new Redis(redisUrl());
  });
  afterAll(async () => {
    await app?.close();
    redis?.disconnect();
    await postgres?.stop();
  });
  beforeEach(() => app!.timeline.entries.splice(0));
  return {
    get app() {
      return app!;
    },
    get redis() {
      return redis!;
    },
  };
}
