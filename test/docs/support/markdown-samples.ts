import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '../../..');

/** The package's entry points, as a consumer imports them, mapped onto the sources of this checkout. */
const ENTRY_POINTS: Record<string, string> = {
  'nestjs-distributed-lock': 'lib/index.ts',
  'nestjs-distributed-lock/testing': 'lib/testing/index.ts',
  'nestjs-distributed-lock/transactional': 'lib/transactions/nestjs-cls/index.ts',
  'nestjs-distributed-lock/health': 'lib/health/index.ts',
  'nestjs-distributed-lock/fencing/typeorm': 'lib/fencing/typeorm/index.ts',
  'nestjs-distributed-lock/fencing/drizzle': 'lib/fencing/drizzle/index.ts',
};

/** Compiler options as `nest new` (Nest 11) writes them, plus the entry points mapped to this checkout. */
function nestNewOptions(dir: string): ts.CompilerOptions {
  return {
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    target: ts.ScriptTarget.ES2023,
    declaration: true,
    removeComments: true,
    emitDecoratorMetadata: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    esModuleInterop: true,
    sourceMap: true,
    incremental: false,
    skipLibCheck: true,
    strictNullChecks: true,
    forceConsistentCasingInFileNames: true,
    noImplicitAny: false,
    strictBindCallApply: false,
    noFallthroughCasesInSwitch: false,
    noEmit: true,
    types: ['node', 'jest'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    baseUrl: dir,
    paths: {
      ...Object.fromEntries(Object.entries(ENTRY_POINTS).map(([name, file]) => [name, [join(ROOT, file)]])),
      '*': [join(ROOT, 'node_modules/*')],
    },
  };
}

/**
 * Every file under `dir` type-checked in one program (one program for all pages: the library and its
 * dependencies' types are read once) with the compiler options of a new Nest application; the problems,
 * as `file:line message`, in the samples only.
 */
export function compileProblems(dir: string, files: readonly string[]): string[] {
  const program = ts.createProgram([...files], nestNewOptions(dir));
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file === undefined || diagnostic.file.fileName.startsWith(dir))
    .map((diagnostic) => {
      const where = diagnostic.file ? `${diagnostic.file.fileName.slice(dir.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
}

/** Runs every `*.spec.ts` under `dir` with Jest, in one run; the exit status, and the output when it failed. */
export function runSampleSpecs(dir: string): { status: number | null; output: string } {
  const config = {
    rootDir: dir,
    testMatch: ['**/*.spec.ts'],
    testEnvironment: 'node',
    transform: { '^.+\\.ts$': [require.resolve('ts-jest'), { diagnostics: false, tsconfig: { experimentalDecorators: true, emitDecoratorMetadata: true, esModuleInterop: true } }] },
    moduleNameMapper: {
      // The library's sources import each other with the .js extension they have once compiled.
      '^(\\.{1,2}/.*)\\.js$': '$1',
      ...Object.fromEntries(Object.entries(ENTRY_POINTS).map(([name, file]) => [`^${name.replace(/\//g, '\\/')}$`, join(ROOT, file)])),
    },
    moduleDirectories: ['node_modules', join(ROOT, 'node_modules')],
  };
  const jest = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--config', JSON.stringify(config), '--ci', '--silent'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: jest.status, output: jest.status === 0 ? '' : `${jest.stdout}\n${jest.stderr}` };
}
