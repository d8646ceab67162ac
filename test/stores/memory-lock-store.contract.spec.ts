import { MemoryLockStore } from '../../lib/index';
import { describeLockStoreContract } from './lock-store.contract';

describeLockStoreContract('MemoryLockStore', async () => ({ store: new MemoryLockStore() }));
