import { createHash } from 'node:crypto';

/** One build of a Lua script: its text, and the SHA1 that EVALSHA names it by. */
export class LuaScript {
  readonly sha: string;

  constructor(readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }
}

/** How a script that announces on a channel announces: PUBLISH, or SPUBLISH for sharded pub/sub. */
export type PublishCommand = 'PUBLISH' | 'SPUBLISH';

/**
 * The two builds of a script that announces on a channel, picked by whether the connection uses sharded
 * pub/sub (a script may only SPUBLISH on a channel of its own slot). `lua` gets the command's name.
 */
export function publishingLua(lua: (publish: PublishCommand) => string): (sharded: boolean) => LuaScript {
  const plain = new LuaScript(lua('PUBLISH'));
  const sharded = new LuaScript(lua('SPUBLISH'));
  return (useSharded) => (useSharded ? sharded : plain);
}

/** A script call as its reply parser (and a clean-up of it) sees it. */
export interface SentScript<Input> {
  /** The user's key the call is for (errors name it). */
  readonly key: string;
  readonly input: Input;
  /** `RedisConnection.epoch` when it was sent: a reply in a later one may answer a second delivery. */
  readonly epoch: number;
  /** The script's reply as it comes (also after the call timed out), for a clean-up that wants to see it. */
  readonly reply: Promise<unknown>;
  /** The input's ownership token, where the script declares one (see {@link ScriptDefinition.ownershipToken}). */
  readonly ownershipToken: string | undefined;
}

/**
 * One verb of the Redis protocol, as its script file defines it: the Lua, how a typed input becomes the
 * script's keys and arguments, how its reply becomes a result, and which input is the ownership token.
 * `RedisCommands.runScript` sends every one of them the same way (see commands/script-send.ts).
 */
export interface ScriptDefinition<Input, Reply> {
  /** The Lua, or its PUBLISH / SPUBLISH builds ({@link publishingLua}) for a script that announces. */
  readonly lua: string | ((sharded: boolean) => LuaScript);
  /** How many of {@link keysAndArgs} are declared keys (a Cluster routes the call by the first). */
  readonly numKeys: number | ((input: Input) => number);
  /**
   * The declared keys first, then the arguments, in one array built in one pass: on the hot path this is
   * the call's only allocation besides the input, and ioredis takes the array as it is.
   */
  readonly keysAndArgs: (input: Input) => (string | number)[];
  /** Runs where the reply arrives: its result is the call's, what it throws the call's rejection. */
  readonly parse: (reply: unknown, call: SentScript<Input>) => Reply;
  /**
   * The input's ownership token, for scripts that grant: a call whose outcome is unknown is cleaned up by
   * releasing what this token may have been granted.
   */
  readonly ownershipToken?: (input: Input) => string;
}

/** A {@link ScriptDefinition} ready to send: its builds made, their SHAs computed once. */
export interface RedisScript<Input, Reply> extends Omit<ScriptDefinition<Input, Reply>, 'lua'> {
  /** The build to send on a connection that uses sharded pub/sub (`true`) or not. */
  readonly lua: (sharded: boolean) => LuaScript;
}

export function defineScript<Input, Reply>(definition: ScriptDefinition<Input, Reply>): RedisScript<Input, Reply> {
  const { lua } = definition;
  if (typeof lua !== 'string') return { ...definition, lua };
  const build = new LuaScript(lua);
  return { ...definition, lua: () => build };
}

/**
 * The same script with another reader of its reply, for a caller that must look at more than the reply
 * (the connection's epoch, a memory of its own): made once, so the call itself still carries no closure.
 */
export function withParse<Input, Reply>(
  script: RedisScript<Input, unknown>,
  parse: (reply: unknown, call: SentScript<Input>) => Reply,
): RedisScript<Input, Reply> {
  return { ...script, parse };
}
