// Entry point `nestjs-distributed-lock/health`: loads @nestjs/terminus (an optional peer) only for apps that import it.
export { LockHealthIndicator, type LockHealthCheckOptions, type LockHealthDetails } from './lock.health-indicator.js';
