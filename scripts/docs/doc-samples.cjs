// The documentation samples: which pages show files a reader copies, and how a page is cut into them.
// CommonJS on purpose, so that both the repo's Jest spec (test/docs/) and the packed-package consumers
// (scripts/consumers/run.mjs, plain Node) read the pages the same way.
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

const ROOT = join(__dirname, '../..');

/**
 * The pages whose samples are compiled, each as a project of its own (its name: the directory its files go
 * to, so that two pages may both show an `app.module.ts`). Which blocks are left fragments, and why, is
 * listed in test/docs/doc-samples.spec.ts.
 */
const DOC_PAGES = new Map([
  ['README.md', 'readme'],
  ['docs/etcd.md', 'etcd'],
  ['docs/fencing.md', 'fencing'],
  ['docs/health.md', 'health'],
  ['docs/lock-shapes.md', 'lock-shapes'],
  ['docs/observability.md', 'observability'],
  ['docs/redlock.md', 'redlock'],
  ['docs/stores.md', 'stores'],
  ['docs/testing.md', 'testing'],
  ['docs/zookeeper.md', 'zookeeper'],
]);

/**
 * The files of a Markdown page: every ```ts block whose lines include `// <path>.ts` markers is cut into
 * those files (a marker's line may go on with a comment after `:`). Blocks without markers are fragments
 * of a file the reader already has, and are not compiled.
 */
function samplesOf(markdown) {
  const files = new Map();
  for (const [, block] of markdown.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const parts = block.split(/^\/\/ ([\w./-]+\.ts)(?::.*)?$/m);
    for (let i = 1; i < parts.length; i += 2) files.set(parts[i], parts[i + 1]);
  }
  return files;
}

/**
 * Writes the samples of every page of `pages` under `<dir>/<project>/src/`, as a `nest new` project holds
 * them (reflect-metadata loaded first, as main.ts or Jest's setup would); returns each page's files.
 */
function writeDocSamples(dir, pages = DOC_PAGES) {
  const written = new Map();
  for (const [page, project] of pages) {
    const files = samplesOf(readFileSync(join(ROOT, page), 'utf8'));
    for (const [path, text] of files) {
      const file = join(dir, project, 'src', path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `import 'reflect-metadata';\n${text}`);
    }
    written.set(page, files);
  }
  return written;
}

module.exports = { DOC_PAGES, samplesOf, writeDocSamples };
