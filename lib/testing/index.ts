// Entry point `nestjs-distributed-lock/testing`: helpers for users' own tests. Imports only the core barrel.
export { LockTestingModule, type LockTestingModuleOptions } from './lock-testing.module.js';
export { LockTestKit, type ForeignHold, type ForeignHoldOptions, type LoseLeaseOptions } from './lock-test-kit.js';
export {
  FaultInjectingLockStore,
  type FaultOptions,
  type InjectedFault,
  type LockStoreOperation,
} from './fault-injecting-lock.store.js';
export { LockEventRecorder, type LockEventMatch, type WaitForEventOptions } from './lock-event-recorder.js';
