import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An order paid in installments. `paidInstallments` is read-modify-written under the order's lock;
 * `lastFencingToken` is the fencing check at the database: a write carrying an older token is refused.
 */
@Entity('orders')
export class Order {
  @PrimaryColumn('text')
  id!: string;

  @Column('int', { name: 'installments' })
  installments!: number;

  @Column('int', { name: 'paid_installments', default: 0 })
  paidInstallments!: number;

  @Column('text', { default: 'open' })
  status!: 'open' | 'paid' | 'expired';

  @Column('bigint', { name: 'last_fencing_token', default: '0' })
  lastFencingToken!: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;
}
