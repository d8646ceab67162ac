import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One installment paid. Deliberately no unique constraint on (order, installment): the demo checks that
 * the lock, not the database, kept two instances from paying the same installment twice.
 */
@Entity('payments')
export class Payment {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('text', { name: 'order_id' })
  orderId!: string;

  @Column('int')
  installment!: number;

  @Column('bigint', { name: 'fencing_token' })
  fencingToken!: string;

  @Column('text')
  instance!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
