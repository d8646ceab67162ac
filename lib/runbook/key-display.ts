/** The characters key segments keep as they are (see keys/key-segment.encoding.ts). */
const KEPT = /^[A-Za-z0-9_.-]$/;

/**
 * A stored key as the user thinks of it. Template segments are percent-encoded in the store (`order:{id}`
 * with id `EU:42/ä` is stored as `order:EU%3A42%2F%C3%A4`); runs of `%XX` are decoded back, anything that is
 * not valid UTF-8 stays as stored. What a terminal would act on is shown escaped (see {@link terminalSafe}),
 * so a decoded value cannot forge a line of the listing or reorder what the operator reads.
 */
export function displayKey(stored: string): string {
  const decoded = stored.replace(/(?:%[0-9A-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  return terminalSafe(decoded);
}

/**
 * Text as it may reach an operator's terminal: every control character (C0 and C1: newline, escape, CSI),
 * format character (bidi overrides and isolates, zero-width ones), line and paragraph separator and lone
 * surrogate is written as a `\uXXXX` escape.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE_FOR_TERMINALS, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

const UNSAFE_FOR_TERMINALS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

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
