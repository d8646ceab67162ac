import { LockConfigError } from '../../errors/lock-config.error.js';
import { redactOptionValue } from '../../support/redact-option-value.js';
import { checkedAtStartup, refuseForeignConnection, type LockStoreKindDefinition } from '../lock-store-kind.interface.js';
import { RedlockLockStore } from './redlock-lock.store.js';
import { assertRedlockOption, type RedlockConnectionOption } from './redlock-masters.option.js';

/** The module options of `store: 'redlock'`. */
export interface RedlockModuleOptions {
  /**
   * Where the locks live with `store: 'redlock'`: `{ masters: [...] }`, an odd number (at least 3) of
   * independent Redis servers, each a `redis://` URL, ioredis options of one server, or an ioredis `Redis`
   * client to reuse (never closed by the module). A grant needs a majority of them. Uses ioredis only, like
   * the Redis store. Required when `store` is `'redlock'`; what it guarantees and where it stops (process
   * pauses, clock jumps, masters restarted without persistence): docs/redlock.md.
   */
  redlock?: RedlockConnectionOption;
}

/** `store: 'redlock'`: a majority of independent Redis masters, quorum fencing tokens (docs/redlock.md). */
export const redlockStoreKind: LockStoreKindDefinition<'redlock', RedlockConnectionOption> = {
  name: 'redlock',
  optionNames: ['redlock'],
  storeClassName: 'RedlockLockStore',
  resolve: (options) => {
    assertRedlockOption(options.redlock);
    return options.redlock;
  },
  refuseForeign: (options, chosen) => refuseForeignConnection('redlock', 'redlock', options, chosen),
  // A master older than Redis 6 would fail every grant's second phase: refused at startup, not at the first lock.
  create: (option, { keyPrefix, commandTimeoutMs }) =>
    checkedAtStartup(new RedlockLockStore(option.masters, { keyPrefix, commandTimeoutMs }), (store) => store.checkMasterVersions()),
  runbook: {
    flag: 'redlock',
    env: 'REDLOCK_MASTERS',
    address: '<redis:// URL>,<redis:// URL>,<redis:// URL> (every master)',
    // Refused as a whole, masked: any entry may carry a password.
    checkAddress: (address) => {
      try {
        assertRedlockOption({ masters: address.split(',') });
      } catch (error) {
        if (!(error instanceof LockConfigError)) throw error;
        throw new LockConfigError('--redlock', redactOptionValue(address), `redis:// URLs of an odd number (3 or more) of distinct masters, separated by commas (${error.message})`);
      }
    },
    open: async (address, { keyPrefix, commandTimeoutMs }) => new RedlockLockStore(address.split(','), { keyPrefix, commandTimeoutMs }),
  },
};
