import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import { ClsModule } from 'nestjs-cls';
import { LockModule, type LockModuleOptions } from 'nestjs-distributed-lock';
import { LockHealthIndicator } from 'nestjs-distributed-lock/health';
import { releaseLocksAfterCommit } from 'nestjs-distributed-lock/transactional';
import { HealthController } from './health/health.controller.js';
import { CloseExpiredOrdersJob } from './jobs/close-expired-orders.job.js';
import { JobRun } from './jobs/job-run.entity.js';
import { DrillHooks } from './orders/drill-hooks.service.js';
import { Order } from './orders/order.entity.js';
import { OrdersController } from './orders/orders.controller.js';
import { OrdersService } from './orders/orders.service.js';
import { Payment } from './orders/payment.entity.js';
import { InstanceStats } from './stats/instance-stats.service.js';
import { StatsController } from './stats/stats.controller.js';
import { StockItem } from './stock/stock-item.entity.js';
import { StockController } from './stock/stock.controller.js';
import { StockService } from './stock/stock.service.js';

export const ENTITIES = [Order, Payment, StockItem, JobRun];

@Module({
  imports: [
    ConfigModule.forRoot({ isGlobal: true }),
    ScheduleModule.forRoot(),
    TerminusModule.forRoot({ logger: false }),
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        type: 'postgres',
        url: config.getOrThrow<string>('DATABASE_URL'),
        entities: ENTITIES,
        // Several instances start at once in the demo: only the first one creates the schema.
        synchronize: config.get('DB_SYNCHRONIZE', 'true') === 'true',
      }),
    }),
    ClsModule.forRoot({
      global: true,
      middleware: { mount: true },
      plugins: [
        new ClsPluginTransactional({
          // Locks taken inside these transactions are released after COMMIT or ROLLBACK, not before.
          adapter: releaseLocksAfterCommit(new TransactionalAdapterTypeOrm({ dataSourceToken: getDataSourceToken() })),
        }),
      ],
    }),
    LockModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService): LockModuleOptions =>
        config.get('LOCK_STORE') === 'memory'
          ? { store: 'memory' }
          : { redis: config.getOrThrow<string>('REDIS_URL'), keyPrefix: config.get('LOCK_KEY_PREFIX', 'sample:') },
    }),
  ],
  controllers: [OrdersController, StockController, StatsController, HealthController],
  providers: [
    OrdersService,
    StockService,
    CloseExpiredOrdersJob,
    InstanceStats,
    DrillHooks,
    LockHealthIndicator,
  ],
})
export class AppModule {}
