// Entry point `nestjs-distributed-lock/fencing/typeorm`: loads typeorm (an optional peer) only for apps that import it.
export { fencedTypeOrmUpdate, type FencedTypeOrmUpdate } from './fenced-typeorm-update.js';
