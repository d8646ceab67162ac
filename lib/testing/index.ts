// Entry point `nestjs-distributed-lock/testing`: helpers for users' own tests. Imports only the core barrel.
export { LockTestingModule, type LockTestingModuleOptions } from './lock-testing.module.js';
export { LockTestKit, type ForeignHold, type ForeignHoldOptions, type LoseLeaseOptions } from './lock-test-kit.js';
export { FaultInjectingLockStore } from './fault-injecting-lock.store.js';
export type { FaultOptions, InjectedFault, LockStoreOperation } from './injected-fault.js';
export { LockEventRecorder, type LockEventMatch, type WaitForEventOptions } from './lock-event-recorder.js';
