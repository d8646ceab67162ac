/**
 * The one glob dialect every store's `list(match)` speaks: `*` any run of characters, `?` exactly one,
 * everything else literal. Redis' SCAN knows more (`[a-z]`, `\` escapes); those are escaped there, so
 * an operator's pattern means the same thing whichever store runs.
 */
export function globToRegExp(match: string): RegExp {
  let source = '';
  for (const char of match) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** The same pattern for Redis' SCAN MATCH: only `*` and `?` keep their meaning. */
export function globForRedis(match: string): string {
  return match.replace(/[[\]\\]/g, '\\$&');
}
