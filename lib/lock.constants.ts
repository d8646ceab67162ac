export { LockStore, InjectLockStore } from './stores/lock-store.interface.js';
