/** The invariants of docs/reliability.md, by letter. */
export type Invariant = 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g' | 'h';

export const INVARIANT_NAMES: Record<Invariant, string> = {
  a: 'exclusion',
  b: 'fencing',
  c: 'liveness',
  d: 'nothing leaked',
  e: 'loss visible',
  f: 'processes',
  g: 'same input, same answer',
  h: 'no steady polling',
};

export interface Violation {
  readonly invariant: Invariant;
  /** The key the violation is about, if any: the excerpt shows that key's events around `at`. */
  readonly key?: string;
  readonly at: number;
  readonly message: string;
}
