/**
 * Issue #5: `@` mentions read the kernel silently — names, types, shapes; a DataFrame's
 * shape, columns/dtypes and head(5), never its whole contents — and leave no trace in the
 * user's namespace or execution count. Real ipykernel from the venv.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchKernel, pythonKernelArgv, type LaunchedKernel } from '@cellmate/kernel-bridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listVariables, summarizeVariable } from '../../src/context/kernel-inspect.js';

const PYTHON = path.join(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..'),
  '.venv',
  'bin',
  'python'
);

describe.skipIf(!existsSync(PYTHON))('silent kernel inspection for @ mentions (issue #5)', () => {
  let kernel: LaunchedKernel;
  beforeAll(async () => {
    kernel = await launchKernel({ argv: pythonKernelArgv(PYTHON), kernelName: 'python3' });
    const r = await kernel.client.execute(
      'import pandas as pd\ndf = pd.DataFrame({"a": range(500), "b": [str(i) for i in range(500)]})\nnums = [1, 2, 3]\ndef fn(): pass',
      { timeoutMs: 60_000 }
    );
    expect(r.reply.content.status).toBe('ok');
  }, 60_000);
  afterAll(async () => kernel?.shutdown(2000));

  it('lists variables by prefix with type and shape/len; functions and modules left out', async () => {
    const all = await listVariables(kernel.client, '');
    expect(all).toEqual([
      { kind: 'variable', name: 'df', detail: 'DataFrame 500×2' },
      { kind: 'variable', name: 'nums', detail: 'list len 3' }
    ]);
    expect((await listVariables(kernel.client, 'n')).map((v) => v.name)).toEqual(['nums']);
  });

  it('summarises a DataFrame compactly and leaves the namespace and execution count alone', async () => {
    const before = await kernel.client.execute('sorted(k for k in globals() if not k.startswith("_"))', {
      timeoutMs: 10_000
    });
    const s = await summarizeVariable(kernel.client, 'df');
    expect(s).toContain('@df: pandas.DataFrame 500×2');
    expect(s).toMatch(/columns \(2\): a \(int64\), b \((object|str)\)/);
    expect(s).toContain('head(5):');
    expect(s).not.toMatch(/\n5 +5 +5/); // row 5 is not there
    expect(await summarizeVariable(kernel.client, 'missing_name')).toBeUndefined();
    const after = await kernel.client.execute('sorted(k for k in globals() if not k.startswith("_"))', {
      timeoutMs: 10_000
    });
    const names = (r: typeof before) =>
      JSON.stringify(
        r.iopub
          .filter((m) => m.header.msg_type === 'execute_result')
          .map((m) => (m.content as { data: Record<string, unknown> }).data['text/plain'])
      );
    expect(names(after)).toBe(names(before));
    // silent + store_history false: the summaries did not take execution counts.
    expect(after.reply.content.execution_count).toBe((before.reply.content.execution_count ?? 0) + 1);
  });
});
