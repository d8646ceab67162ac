/** A closed stretch of the run's clock, epoch ms. */
export interface Interval {
  readonly from: number;
  readonly to: number;
}

/** Sorted, merged: the union of `intervals`. */
export function union(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].filter((i) => i.to >= i.from).sort((x, y) => x.from - y.from);
  const out: Interval[] = [];
  for (const next of sorted) {
    const last = out[out.length - 1];
    if (last && next.from <= last.to) out[out.length - 1] = { from: last.from, to: Math.max(last.to, next.to) };
    else out.push(next);
  }
  return out;
}

/** Whether `span` meets any interval of a merged union. */
export function meets(merged: readonly Interval[], span: Interval): boolean {
  return merged.some((i) => i.from <= span.to && span.from <= i.to);
}

/** The longest part of `span` that no interval of a merged union covers. */
export function longestGap(merged: readonly Interval[], span: Interval): Interval | undefined {
  let best: Interval | undefined;
  let cursor = span.from;
  const consider = (to: number): void => {
    if (to > cursor && (!best || to - cursor > best.to - best.from)) best = { from: cursor, to };
  };
  for (const i of merged) {
    if (i.to < span.from) continue;
    if (i.from > span.to) break;
    consider(Math.min(i.from, span.to));
    cursor = Math.max(cursor, i.to);
  }
  consider(span.to);
  return best;
}
