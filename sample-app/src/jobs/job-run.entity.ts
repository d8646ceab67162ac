import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One execution of a scheduled job: the demo checks there is exactly one per tick across instances. */
@Entity('job_runs')
export class JobRun {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('text')
  job!: string;

  @Column('bigint')
  tick!: string;

  @Column('text')
  instance!: string;
}
