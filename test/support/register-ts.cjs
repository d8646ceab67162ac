// Lets child processes in drills run the TypeScript sources directly: transpiles .ts on require and maps
// the `.js` specifiers the sources use to their `.ts` files, the same way the Jest config does.
const fs = require('node:fs');
const Module = require('node:module');
const ts = require('typescript');

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
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
