import { Module } from '@nestjs/common';
import { DistributedLockModule } from 'nestjs-distributed-lock';
import { ReportJob } from './report.job.js';

@Module({
  imports: [
    DistributedLockModule.forRootAsync({
      useFactory: () => ({ redis: process.env.REDIS_URL, keyPrefix: 'consumer12:' }),
    }),
  ],
  providers: [ReportJob],
})
export class AppModule {}
