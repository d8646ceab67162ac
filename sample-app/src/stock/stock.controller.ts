import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { StockService } from './stock.service.js';

@Controller('stock')
export class StockController {
  constructor(private readonly stock: StockService) {}

  @Post(':sku/reserve')
  @HttpCode(200)
  reserve(@Param('sku') sku: string, @Body() body: { quantity?: number }): Promise<{ sku: string; available: number }> {
    return this.stock.reserve(sku, Number(body?.quantity ?? 1));
  }
}
