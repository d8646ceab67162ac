import type { AcknowledgedGrants } from '../acknowledged-grants.js';
import type { GrantChannel } from '../channels/grant-channel.js';
import type { RedisCommands } from '../commands/redis-commands.js';
import type { RedisKeyLayout } from '../redis-key-layout.js';

/** What the fair queue needs from its store. */
export interface FairQueueContext {
  readonly commands: RedisCommands;
  readonly layout: RedisKeyLayout;
  readonly grants: GrantChannel;
  /** This store's name on the grant channels. */
  readonly instance: string;
  /** `RedisConnection.epoch`: a reply in another epoch than its call may answer a second delivery. */
  epoch(): number;
  /** The store's token-checked release (it hands the key on). */
  release(key: string, token: string): Promise<unknown>;
  /** With `replicas`: a grant is handed out only once they acknowledged it (`AcknowledgedGrants.confirm`). */
  readonly acknowledged: AcknowledgedGrants | undefined;
}
