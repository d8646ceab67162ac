/** One line of the Prometheus text exposition format: a series name, its labels, its value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A series an alert expression reads: its metric name and the label matchers written next to it. */
export interface SeriesSelector {
  readonly name: string;
  /** As written in the expression (`name{label="value"}`), for failure messages. */
  readonly text: string;
  /** Whether a sample (of any name) satisfies every label matcher of the selector. */
  matches(sample: Sample): boolean;
}

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly series: SeriesSelector[];
}

/** Parses the text an exporter serves (comments and HELP/TYPE lines skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, label, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[label!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]!.replace('Inf', 'Infinity')) });
  }
  return samples;
}

/** Every alerting rule in the Markdown page's ```yaml blocks (Prometheus rule-file shape). */
export function alertRules(markdown: string, parseYaml: (source: string) => unknown): AlertRule[] {
  const rules: AlertRule[] = [];
  for (const [, block] of markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)) {
    const file = parseYaml(block!) as { groups?: Array<{ rules?: Array<{ alert?: string; expr?: string }> }> } | null;
    for (const group of file?.groups ?? []) {
      for (const rule of group.rules ?? []) {
        if (typeof rule.alert !== 'string' || typeof rule.expr !== 'string') continue;
        rules.push({ alert: rule.alert, expr: rule.expr, series: seriesRead(rule.expr) });
      }
    }
  }
  return rules;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless']);

/**
 * The series a PromQL expression reads: every identifier that is not a function (followed by `(`), a
 * keyword, or a label in a grouping (`by (…)`) or a matcher (`{…}`), with the matchers written after it.
 */
export function seriesRead(expr: string): SeriesSelector[] {
  const stripped = expr
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"/g, (literal) => literal.replace(/[a-zA-Z_:]/g, 'x')); // no identifiers in strings
  const found: SeriesSelector[] = [];
  const original = expr.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ').replace(/\[[^\]]*\]/g, ' ');
  for (const match of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?/g)) {
    const name = match[1]!;
    const after = stripped.slice(match.index! + match[0].length);
    if (KEYWORDS.has(name) || (!match[2] && after.trimStart().startsWith('('))) continue;
    const before = stripped.slice(0, match.index!);
    if (/[0-9.]$/.test(before)) continue; // the exponent or unit of a number
    const matchersText = match[2] ? original.slice(match.index! + match[0].indexOf('{'), match.index! + match[0].length) : '';
    found.push(selector(name, matchersText));
  }
  return found;
}

function selector(name: string, matchersText: string): SeriesSelector {
  const matchers = [...matchersText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)].map(([, label, op, value]) => ({
    label: label!,
    op: op!,
    value: value!,
  }));
  return {
    name,
    text: `${name}${matchersText}`,
    matches: (sample) =>
      matchers.every(({ label, op, value }) => {
        const actual = sample.labels[label] ?? '';
        const regex = () => new RegExp(`^(?:${value})$`).test(actual);
        return op === '=' ? actual === value : op === '!=' ? actual !== value : op === '=~' ? regex() : !regex();
      }),
  };
}
