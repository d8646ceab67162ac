import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('stock_items')
export class StockItem {
  @PrimaryColumn('text')
  sku!: string;

  @Column('int')
  available!: number;

  @Column('bigint', { name: 'last_fencing_token', default: '0' })
  lastFencingToken!: string;
}
