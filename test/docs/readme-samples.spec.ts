import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '../..');

/** The package's entry points, as a consumer imports them, mapped onto the sources of this checkout. */
const ENTRY_POINTS: Record<string, string> = {
  'nestjs-distributed-lock': 'lib/index.ts',
  'nestjs-distributed-lock/testing': 'lib/testing/index.ts',
  'nestjs-distributed-lock/transactional': 'lib/transactions/nestjs-cls/index.ts',
  'nestjs-distributed-lock/health': 'lib/health/index.ts',
  'nestjs-distributed-lock/fencing/typeorm': 'lib/fencing/typeorm/index.ts',
  'nestjs-distributed-lock/fencing/drizzle': 'lib/fencing/drizzle/index.ts',
};

/**
 * The files of a Markdown page: every ```ts block whose lines include `// <path>.ts` markers is cut into
 * those files (a marker's line may go on with a comment after `:`). Blocks without markers are fragments
 * of a file the reader already has, and are not compiled here.
 */
function filesOf(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const [, block] of markdown.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const parts = block!.split(/^\/\/ ([\w./-]+\.ts)(?::.*)?$/m);
    for (let i = 1; i < parts.length; i += 2) files.set(parts[i]!, parts[i + 1]!);
  }
  return files;
}

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
 * Docs are tests: the application files README.md shows (the first application, its controller and its
 * spec) are written out as a `nest new` project would hold them, type-checked with its compiler options,
 * and their spec is run with Jest. A sample that drifts from the API, or that does not compose with the
 * others as a reader combines them, fails here.
 */
describe('README samples', () => {
  const files = filesOf(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'readme-samples-'));
    for (const [path, text] of files) {
      mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
      writeFileSync(join(dir, 'src', path), `import 'reflect-metadata';\n${text}`);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('include the first application as files, and its spec', () => {
    expect([...files.keys()]).toEqual(
      expect.arrayContaining(['app.module.ts', 'orders/orders.module.ts', 'orders/orders.service.ts', 'orders/orders.controller.ts', 'orders/orders.service.spec.ts']),
    );
  });

  it('compile as written, with the compiler options of a new Nest application', () => {
    const names = [...files.keys()].map((path) => join(dir, 'src', path));
    const program = ts.createProgram(names, nestNewOptions(dir));
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((diagnostic) => diagnostic.file === undefined || diagnostic.file.fileName.startsWith(dir))
      .map((diagnostic) => {
        const where = diagnostic.file ? `${diagnostic.file.fileName.slice(dir.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line + 1}` : '';
        return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  });

  it('have a spec that passes as written', () => {
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
    expect({ status: jest.status, output: jest.status === 0 ? '' : `${jest.stdout}\n${jest.stderr}` }).toEqual({ status: 0, output: '' });
  });
});
