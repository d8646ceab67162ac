/** What an error shows in place of a string option it refused. */
const MASKED_VALUE = '***';

/**
 * A refused option's value as an error message may show it. A string that failed validation is never
 * parsed for its secrets: a malformed URL, a libpq `host=db password=…` string, a `?password=` query, a
 * DSN of another database — no pattern finds every password, so the whole string is masked. In a list,
 * the entries `isSafe` accepts (say, valid endpoints, which carry no credentials) are shown and the rest
 * masked. Anything else is returned as it is (the error describes objects by their type only).
 */
export function redactOptionValue(value: unknown, isSafe: (entry: string) => boolean = () => false): unknown {
  const redact = (entry: unknown): unknown => (typeof entry === 'string' && !isSafe(entry) ? MASKED_VALUE : entry);
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map(redact).join(', ');
  return value;
}
