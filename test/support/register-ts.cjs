// Lets child processes in drills, the sample app in the demo and the bench run the TypeScript sources
// directly: transpiles .ts on require and maps the `.js` specifiers the sources use to their `.ts` files,
// the same way the Jest config does.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const ts = require('typescript');

// The sample app imports the library by its package name, as users do; here that name means lib/.
const PACKAGE_ENTRIES = {
  'nestjs-distributed-lock': path.join(__dirname, '../../lib/index.ts'),
  'nestjs-distributed-lock/transactional': path.join(__dirname, '../../lib/transactions/nestjs-cls/index.ts'),
  'nestjs-distributed-lock/testing': path.join(__dirname, '../../lib/testing/index.ts'),
  'nestjs-distributed-lock/health': path.join(__dirname, '../../lib/health/index.ts'),
  'nestjs-distributed-lock/fencing/typeorm': path.join(__dirname, '../../lib/fencing/typeorm/index.ts'),
  'nestjs-distributed-lock/fencing/drizzle': path.join(__dirname, '../../lib/fencing/drizzle/index.ts'),
};

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (PACKAGE_ENTRIES[request]) return PACKAGE_ENTRIES[request];
  if (parent && request.startsWith('.') && request.endsWith('.js')) {
    try {
      return resolve.call(this, request.slice(0, -3) + '.ts', parent, ...rest);
    } catch {
      // Fall through to a real .js file.
    }
  }
  return resolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
      inlineSourceMap: true,
    },
  });
  module._compile(outputText, filename);
};
