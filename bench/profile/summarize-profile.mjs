// Summarizes a .cpuprofile: self time by function (top N) and by file/package.
// node bench/profile/summarize-profile.mjs <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';
const [file, topArg = '40'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fn = new Map();
const pkg = new Map();
for (const [id, us] of self) {
  const { callFrame: f } = byId.get(id);
  const where = f.url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, 'nm:').replace(/.*\/wt-perf\//, '');
  const name = `${f.functionName || '(anon)'} ${where}:${f.lineNumber + 1}`;
  fn.set(name, (fn.get(name) ?? 0) + us);
  const group = where.startsWith('nm:') ? where.split('/').slice(0, where.startsWith('nm:@') ? 2 : 1).join('/') : where === '' ? `(${f.functionName})` : where.startsWith('node:') ? 'node:' + where.slice(5).split('/')[0] : where.split('/').slice(0, 3).join('/');
  pkg.set(group, (pkg.get(group) ?? 0) + us);
}
const pct = (us) => ((100 * us) / total).toFixed(1).padStart(5) + ' %';
console.log(`total ${(total / 1000).toFixed(0)} ms sampled`);
console.log('--- by file/package');
for (const [k, v] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(pct(v), k);
console.log('--- by function');
for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg))) console.log(pct(v), k);
