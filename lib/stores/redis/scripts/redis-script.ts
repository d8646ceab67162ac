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
  /**
   * The Lua; a build several definitions share (one script whose reply two callers read differently); or,
   * for a script that announces, its PUBLISH / SPUBLISH builds ({@link publishingLua}).
   */
  readonly lua: string | LuaScript | ((sharded: boolean) => LuaScript);
  /** How many of {@link keysAndArgs} are declared keys (a Cluster routes the call by the first). */
  readonly numKeys: number | ((input: Input) => number);
  /**
   * The declared keys first, then the arguments, in one array built in one pass (a renew batch's holds
   * 3000 entries): the only array the call builds, and ioredis takes it as it is.
   */
  readonly keysAndArgs: (input: Input) => (string | number)[];
  /** Runs where the reply arrives: its result is the call's, what it throws the call's rejection. */
  readonly parse: (reply: unknown, call: SentScript<Input>) => Reply;
  /**
   * Which input is the ownership token, for scripts that carry one: a clean-up of a call whose outcome is
   * unknown reads it here (an unanswered acquire releases what the token may have been granted).
   */
  readonly ownershipToken?: (input: Input) => string;
}

/**
 * A {@link ScriptDefinition} ready to send: its builds made, their SHAs computed once. One class for every
 * script, so the send path sees one shape of object whichever verb it sends.
 */
export class RedisScript<Input, Reply> {
  readonly numKeys: number | ((input: Input) => number);
  readonly keysAndArgs: (input: Input) => (string | number)[];
  readonly parse: (reply: unknown, call: SentScript<Input>) => Reply;
  readonly ownershipToken: ((input: Input) => string) | undefined;

  constructor(
    definition: Omit<ScriptDefinition<Input, Reply>, 'lua'>,
    /** The build for connections without sharded pub/sub. */
    readonly plain: LuaScript,
    /** The build for connections with it (the same as {@link plain} for a script that announces nothing). */
    readonly sharded: LuaScript,
  ) {
    this.numKeys = definition.numKeys;
    this.keysAndArgs = definition.keysAndArgs;
    this.parse = definition.parse;
    this.ownershipToken = definition.ownershipToken;
  }
}

export function defineScript<Input, Reply>(definition: ScriptDefinition<Input, Reply>): RedisScript<Input, Reply> {
  const { lua } = definition;
  if (typeof lua === 'function') return new RedisScript(definition, lua(false), lua(true));
  const build = typeof lua === 'string' ? new LuaScript(lua) : lua;
  return new RedisScript(definition, build, build);
}

/**
 * The same script with another reader of its reply, for a caller that must look at more than the reply
 * (the connection's epoch, a memory of its own): made once, so the call itself still carries no closure.
 */
export function withParse<Input, Reply>(
  script: RedisScript<Input, unknown>,
  parse: (reply: unknown, call: SentScript<Input>) => Reply,
): RedisScript<Input, Reply> {
  const { numKeys, keysAndArgs, ownershipToken } = script;
  return new RedisScript({ numKeys, keysAndArgs, parse, ownershipToken }, script.plain, script.sharded);
}
