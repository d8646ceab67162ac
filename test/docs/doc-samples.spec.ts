import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOC_PAGES, writeDocSamples } from '../../scripts/docs/doc-samples.cjs';
import { compileProblems, runSampleSpecs } from './support/markdown-samples';

/**
 * The pages whose samples are compiled are DOC_PAGES (scripts/docs/doc-samples.cjs, shared with the
 * packed-package consumer docs-samples), each as a project of its own. Every ```ts block a reader would copy as a file starts with a `// <path>.ts` marker. Blocks left
 * without one, on purpose:
 * - README.md: the `@DistributedLock` reference (methods without their class, one key form each), and the
 *   BullMQ processor (`@nestjs/bullmq` is not installed here);
 * - docs/testing.md: the e2e set-up, which overrides the store of the reader's own `AppModule`;
 * - docs/observability.md: `tracing.ts` (it needs `@opentelemetry/sdk-node`, which this repository does not
 *   install; its first line is a comment, not a marker), and the `diagnostics_channel` subscription, one
 *   line calling the reader's own alerting.
 */

/**
 * Docs are tests: the application files the pages show (README's first application, its controller and
 * its spec; the docs' modules, services and specs) are written out as a `nest new` project would hold them,
 * type-checked with its compiler options in one program, and their specs are run with Jest in one run. A
 * sample that drifts from the API, or that does not compose with the others as a reader combines them,
 * fails here.
 */
describe('documentation samples', () => {
  let dir: string;
  let written: Map<string, Map<string, string>>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'doc-samples-'));
    written = writeDocSamples(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('include the first application of the README as files, and its spec', () => {
    expect([...written.get('README.md')!.keys()]).toEqual(
      expect.arrayContaining(['app.module.ts', 'orders/orders.module.ts', 'orders/orders.service.ts', 'orders/orders.controller.ts', 'orders/orders.service.spec.ts']),
    );
  });

  it('include a file from every page listed (a page whose markers were lost would be skipped silently)', () => {
    expect([...written].filter(([, files]) => files.size === 0).map(([page]) => page)).toEqual([]);
  });

  it('compile as written, with the compiler options of a new Nest application', () => {
    const files = [...DOC_PAGES].flatMap(([page, project]) => [...written.get(page)!.keys()].map((path) => join(dir, project, 'src', path)));
    expect(compileProblems(dir, files)).toEqual([]);
  });

  it('have specs that pass as written', () => {
    expect(runSampleSpecs(dir)).toEqual({ status: 0, output: '' });
  });
});
