// The application processes of the torture run load the TypeScript sources through
// test/support/register-ts.cjs, which transpiles every file on require. Three processes starting at once,
// and a restart after every SIGKILL, would spend most of a short run transpiling the same files again on
// a 2-core box: this keeps each file's output in .tmp/torture-ts-cache/, keyed by a hash of its path and
// source, so a changed file is transpiled again and nothing stale is ever run.
require('../../test/support/register-ts.cjs');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const CACHE = path.join(__dirname, '../../.tmp/torture-ts-cache');
fs.mkdirSync(CACHE, { recursive: true });
const transpile = require.extensions['.ts'];

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const hash = crypto.createHash('sha1').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(CACHE, `${hash}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    // First load of this version: transpile it the way register-ts.cjs does, and keep the output.
    const compile = module._compile;
    module._compile = function (text, file) {
      output = text;
      module._compile = compile;
      const temporary = `${cached}.${process.pid}`;
      fs.writeFileSync(temporary, text);
      fs.renameSync(temporary, cached);
      return compile.call(this, text, file);
    };
    return transpile(module, filename);
  }
  module._compile(output, filename);
};
