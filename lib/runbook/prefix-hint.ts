import type { PrefixSurvey } from '../stores/lock-store.interface.js';
import { terminalSafe } from './key-display.js';

/** A prefix as the operator would type it back: bare when the shell leaves it alone, else single-quoted. */
function asTyped(prefix: string): string {
  const safe = terminalSafe(prefix);
  return /^[\w:./@%+=,-]+$/.test(safe) ? safe : `'${safe.replace(/'/g, `'\\''`)}'`;
}

/**
 * What `list` prints when nothing is held under `prefix`: that, and where locks are held instead when the
 * store can tell (`survey`), so a mistyped or forgotten `--prefix` does not read as "nothing is locked".
 * The fullest prefix is the suggestion; counts from a walk that stopped at its bound say "at least".
 */
export function nothingHeldLine(prefix: string, match: string | undefined, survey: PrefixSurvey | undefined): string {
  const where = `under '${terminalSafe(prefix)}'`;
  const line = match === undefined || match === '*' ? `no held locks ${where}` : `no held locks matching '${terminalSafe(match)}' ${where}`;
  const [fullest, ...others] = survey?.prefixes ?? [];
  if (!survey || !fullest) return survey && !survey.complete ? `${line} (none elsewhere in the part of the keyspace looked at)` : line;
  const atLeast = survey.complete ? '' : 'at least ';
  const counts = [`${atLeast}${fullest.held} held under '${terminalSafe(fullest.prefix)}'`, ...others.map((p) => `${atLeast}${p.held} under '${terminalSafe(p.prefix)}'`)];
  const partial = survey.complete ? '' : ' (the look stopped at its bound: there may be more)';
  return `${line}; ${counts.join(', ')}${partial} — did you mean --prefix ${asTyped(fullest.prefix)}?`;
}
