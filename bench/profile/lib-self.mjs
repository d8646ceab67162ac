// Self time of this library's own functions (lib/) and of what it calls in packages, from a .cpuprofile.
// node bench/profile/lib-self.mjs <file.cpuprofile> [filter=lib/]
import { readFileSync } from 'node:fs';
const [file, filter = '/lib/'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const self = new Map();
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fn = new Map();
let sum = 0;
for (const node of profile.nodes) {
  const us = self.get(node.id) ?? 0;
  const f = node.callFrame;
  if (!f.url.includes(filter) || f.url.includes('node_modules')) continue;
  const name = `${f.functionName || '(anon)'} ${f.url.replace(/.*\/wt-perf\//, '')}:${f.lineNumber + 1}`;
  fn.set(name, (fn.get(name) ?? 0) + us);
  sum += us;
}
console.log(`${filter}: ${((100 * sum) / total).toFixed(1)} % of ${(total / 1000).toFixed(0)} ms`);
for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(((100 * v) / total).toFixed(2).padStart(6), '%', k);
