// Entry point `nestjs-distributed-lock/fencing/drizzle`: loads drizzle-orm (an optional peer) only for apps that import it.
export { fencedDrizzleUpdate, type FencedDrizzleUpdate } from './fenced-drizzle-update.js';
