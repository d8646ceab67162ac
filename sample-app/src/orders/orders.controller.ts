import { Controller, Get, HttpCode, Param, ParseIntPipe, Post, Query } from '@nestjs/common';
import { InstanceStats } from '../stats/instance-stats.service.js';
import type { Order } from './order.entity.js';
import { OrdersService, type PaymentReceipt } from './orders.service.js';

@Controller('orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly stats: InstanceStats,
  ) {}

  /** 200 with the receipt; 409 when the order's lock stayed busy for 2 s or a stale write was refused. */
  @Post(':id/pay')
  @HttpCode(200)
  async pay(
    @Param('id') id: string,
    @Query('drillStallMs', new ParseIntPipe({ optional: true })) drillStallMs?: number,
  ): Promise<PaymentReceipt> {
    this.stats.payRequests++;
    return this.orders.pay(id, drillStallMs);
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<Order> {
    return this.orders.get(id);
  }
}
