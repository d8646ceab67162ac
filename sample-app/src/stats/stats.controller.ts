import { Controller, Get } from '@nestjs/common';
import { InstanceStats } from './instance-stats.service.js';

@Controller('stats')
export class StatsController {
  constructor(private readonly stats: InstanceStats) {}

  @Get()
  get(): Record<string, unknown> {
    return this.stats.snapshot();
  }
}
