import { CONTROL_CHARACTERS } from '../keys/lock-key.js';

/** The characters key segments keep as they are (see keys/key-segment.encoding.ts). */
const KEPT = /^[A-Za-z0-9_.-]$/;

/**
 * A stored key as the user thinks of it. Template segments are percent-encoded in the store (`order:{id}`
 * with id `EU:42/ä` is stored as `order:EU%3A42%2F%C3%A4`); runs of `%XX` are decoded back, anything that is
 * not valid UTF-8 stays as stored. Control characters are shown escaped, so a decoded `%0A` cannot forge a
 * line of the listing.
 */
export function displayKey(stored: string): string {
  const decoded = stored.replace(/(?:%[0-9A-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  return decoded.replace(new RegExp(CONTROL_CHARACTERS.source, 'g'), (char) => JSON.stringify(char).slice(1, -1));
}

/**
 * A store glob that finds every stored key that could display as `typed` (or match the glob `typed`): the
 * longest start of it that encoding leaves unchanged, then `*`. The caller filters the candidates.
 */
export function candidatesGlob(typed: string): string {
  let start = '';
  for (const char of typed) {
    if (!KEPT.test(char)) break;
    start += char;
  }
  return `${start}*`;
}
