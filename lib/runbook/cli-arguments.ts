/** Raised for anything the usage text answers: an unknown flag, a missing value or command. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ParsedArguments {
  /** Words that are not flags: the command and its operands. */
  readonly words: readonly string[];
  /** Flags with a value (`--prefix lock:` or `--prefix=lock:`). */
  readonly values: ReadonlyMap<string, string>;
  /** Flags without a value (`--confirm`). */
  readonly switches: ReadonlySet<string>;
}

/**
 * Strict parsing: every flag must be known, a value flag takes the next word or `=value`, and `--` ends
 * the flags (for a key starting with a dash). Silently ignoring a mistyped flag could send a force-release
 * to the wrong server or namespace.
 */
export function parseArguments(args: readonly string[], valueFlags: ReadonlySet<string>, switchFlags: ReadonlySet<string>): ParsedArguments {
  const words: string[] = [];
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      words.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (valueFlags.has(name)) {
      const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
      if (values.has(name)) throw new UsageError(`--${name} given twice`);
      values.set(name, value);
    } else if (switchFlags.has(name) && eq < 0) {
      switches.add(name);
    } else {
      throw new UsageError(`unknown option ${eq < 0 ? arg : arg.slice(0, eq)}`);
    }
  }
  return { words, values, switches };
}
