import type { Spread } from '../support/stats.js';

/** Numbers for people: thousands grouped, a sensible number of decimals. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }).replace(/,/g, ' ');
}

/** `median (min–max)`, or the median alone when there was one run. */
export function spreadText(spread: Spread, digits = 0): string {
  if (spread.runs === 0) return '–';
  if (spread.runs === 1) return num(spread.median, digits);
  return `${num(spread.median, digits)} (${num(spread.min, digits)}–${num(spread.max, digits)})`;
}

export function times(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–';
}

/** A Markdown table: the first `textColumns` columns left-aligned, the numbers after them right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[], textColumns = 1): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  return [
    `| ${header.map(escape).join(' | ')} |`,
    `| ${header.map((_, i) => (i < textColumns ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
  ].join('\n');
}

/** `evalsha 1, set 1` from per-unit counts. */
export function breakdown(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? '–' : entries.map(([name, calls]) => `${name} ${num(calls, calls % 1 === 0 ? 0 : 2)}`).join(', ');
}

/** A ratio spread: `0.95× (0.90–1.01)`. */
export function ratioText(spread: Spread): string {
  if (spread.runs === 0) return '–';
  if (spread.runs === 1) return times(spread.median);
  return `${times(spread.median)} (${spread.min.toFixed(2)}–${spread.max.toFixed(2)})`;
}
