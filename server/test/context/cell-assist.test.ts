/**
 * "Fix with Cellmate" / "Explain" on a failing cell: the block the model receives names
 * the failing line, walks its names back to the cells that made them (tree-sitter def/use
 * over the cells), and carries the live kernel's facts about them (real ipykernel, the
 * silent inspection `@` mentions use). Also the read-only profile an Explain turn gets.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchKernel, pythonKernelArgv, type LaunchedKernel } from '@cellmate/kernel-bridge';
import type { NotebookCellData } from '@cellmate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellAssistBlock, failingLine } from '../../src/context/cell-assist.js';
import { summarizeVariables } from '../../src/context/kernel-inspect.js';
import { cellNames, traceOrigins } from '../../src/structural/graph/def-use.js';
import { EXPLAIN_PROFILE } from '../../src/modes/profiles.js';

const PYTHON = path.join(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..'),
  '.venv',
  'bin',
  'python'
);

const SOURCES = [
  'import pandas as pd\nraw = pd.DataFrame({"units": [3, 5, 2], "price": [10.0, 4.5, 20.0]})',
  'sales = raw.copy()\nsales["revnue"] = sales["units"] * sales["price"]',
  'sales["month"] = ["jan", "feb", "mar"]\n%time n = len(sales)',
  'top = sales.sort_values("units", ascending=False)\ndef share(x, total=1):\n    helper = x / total\n    return helper',
  'print("top rows", len(top))\ntotal = top["revenue"].sum()'
];
const cell = (i: number, outputs: unknown[] = []): NotebookCellData => ({
  id: `c${i + 1}`,
  cell_type: 'code',
  source: SOURCES[i]!,
  metadata: {},
  outputs,
  execution_count: i + 1
});

describe('def/use over notebook cells (Fix/Explain)', () => {
  it('binds, changes and reads per cell; parameters, attributes and keywords are no reads', async () => {
    const names = await cellNames(SOURCES.map((source) => ({ cellType: 'code', source })));
    expect(names[0]!.binds.sort()).toEqual(['pd', 'raw']);
    expect(names[1]!.binds).toEqual(['sales']);
    expect(names[1]!.changes).toEqual(['sales']);
    expect(names[2]!.changes).toEqual(['sales']);
    expect(names[2]!.binds).toEqual(['n']); // the %time statement is parsed, the magic word is not
    expect(names[3]!.binds.sort()).toEqual(['share', 'top']);
    expect(names[3]!.reads).not.toContain('ascending');
    expect(names[3]!.reads).not.toContain('sort_values');
    expect(names[3]!.reads).not.toContain('x'); // a parameter
    expect(names[4]!.readsByLine.get(2)).toEqual(['top']);
  });

  it('from m import a binds a (and an alias), never the module m', async () => {
    const [names] = await cellNames([
      { cellType: 'code', source: 'from helpers import clean, load as read_rows\nimport os.path\n' }
    ]);
    expect(names!.binds).toEqual(['clean', 'read_rows', 'os']);
  });

  it('walks back from the failing line to the cells that made its names', async () => {
    const names = await cellNames(SOURCES.map((source) => ({ cellType: 'code', source })));
    const origins = traceOrigins(names, 4, ['top']);
    expect(origins.map((o) => [o.name, o.boundIn, o.changedIn])).toEqual([
      ['top', [3], []],
      ['sales', [1], [2]],
      ['raw', [0], []],
      ['pd', [0], []]
    ]);
    // Only cells above the failing one count.
    expect(traceOrigins(names, 1, ['sales'])).toEqual([]);
  });

  it('finds the failing line in IPython tracebacks (ANSI colours, old and new frame headers)', () => {
    expect(
      failingLine([
        '\u001b[0;31mKeyError\u001b[0m',
        'Cell \u001b[0;32mIn[5], line 2\u001b[0m\n      1 print(1)\n----> 2 total = top["revenue"]'
      ])
    ).toBe(2);
    expect(failingLine(['Input In [7], in <cell line: 3>()\n      1 x\n----> 3 y'])).toBe(3);
    expect(failingLine(['----> 4 y'])).toBe(4);
    expect(failingLine(['nothing here'])).toBeUndefined();
  });

  it('TIER-2/MODE-2: an Explain turn is read-only: read tier, world-changing action classes refused, no workers', () => {
    expect(EXPLAIN_PROFILE.maxTier).toBe('read');
    expect(EXPLAIN_PROFILE.worktree).toBe('read-only');
    expect(EXPLAIN_PROFILE.deny).toEqual(expect.arrayContaining(['vibe_spawn', 'vibe_send', 'exit_plan_mode']));
    expect(EXPLAIN_PROFILE.refusedActionClasses?.length).toBeGreaterThan(0);
  });
});

describe.skipIf(!existsSync(PYTHON))('the Fix block with a live kernel (issue #27)', () => {
  let kernel: LaunchedKernel;
  let traceback: string[];
  beforeAll(async () => {
    kernel = await launchKernel({ argv: pythonKernelArgv(PYTHON), kernelName: 'python3' });
    for (const s of SOURCES.slice(0, 4))
      expect((await kernel.client.execute(s.replace('%time ', ''), { timeoutMs: 60_000 })).reply.content.status).toBe(
        'ok'
      );
    const failed = await kernel.client.execute(SOURCES[4]!, { timeoutMs: 60_000 });
    const err = failed.iopub.find((m) => m.header.msg_type === 'error')!.content as { traceback: string[] };
    traceback = err.traceback;
  }, 90_000);
  afterAll(async () => kernel?.shutdown(2000));

  it("EVAL-2: carries the traceback, the failing line, where its names come from and the kernel's columns", async () => {
    const cells = SOURCES.map((_, i) =>
      cell(i, i === 4 ? [{ output_type: 'error', ename: 'KeyError', evalue: "'revenue'", traceback }] : [])
    );
    const asked: string[][] = [];
    const block = await cellAssistBlock({
      notebookPath: 'sales.ipynb',
      cells,
      assist: { action: 'fix', cell: 4, cellId: 'c5' },
      kernelFacts: (names) => {
        asked.push(names);
        return summarizeVariables(kernel.client, names);
      }
    });
    expect(block).toContain('Fix the error of cell [5] in sales.ipynb. Find the root cause before editing');
    expect(block).toContain("Its error: KeyError: 'revenue'");
    expect(block).toContain('Traceback:');
    expect(block).not.toContain('\u001b[');
    expect(block).toContain('The failing line is line 2 of cell [5]: total = top["revenue"].sum()');
    expect(block).toContain('- top: assigned in [4] (id c4); built from sales');
    expect(block).toContain('- sales: assigned in [2] (id c2); changed in [3] (id c3); built from raw');
    expect(asked).toEqual([['top', 'sales', 'raw', 'pd']]);
    // The kernel's facts: the column the failing line wants is not there, the misspelt one is.
    expect(block).toMatch(
      /sales: pandas\.DataFrame 3×4\n\s+columns \(4\): units \(int64\), price \(float64\), revnue \(float64\), month \((object|str)\)/
    );
    expect(block).not.toMatch(/^\s+pd: /m); // modules are no facts
  });

  it("HARN-2: a long chained traceback keeps the cell's own frame and the error, and says what it left out", async () => {
    const lib = (n: number) =>
      Array.from({ length: n }, (_, i) => `File /site-packages/pandas/core/x.py:${i}, in f\n    frame ${i}`).join('\n');
    const tb = [
      `KeyError Traceback\n${lib(80)}\nKeyError: 'revenue'\n\nThe above exception was the direct cause of the following exception:\n`,
      'KeyError Traceback',
      'Cell In[5], line 2\n      1 print("top rows", len(top))\n----> 2 total = top["revenue"].sum()',
      lib(120),
      "KeyError: 'revenue'"
    ];
    const cells = SOURCES.map((_, i) =>
      cell(i, i === 4 ? [{ output_type: 'error', ename: 'KeyError', evalue: "'revenue'", traceback: tb }] : [])
    );
    const block = await cellAssistBlock({
      notebookPath: 'sales.ipynb',
      cells,
      assist: { action: 'fix', cell: 4 },
      kernelFacts: async () => []
    });
    const shown = block.slice(block.indexOf('Traceback:'), block.indexOf('The failing line'));
    expect(shown.length).toBeLessThan(5_500); // 4,000 kept, the markers and the indent
    expect(shown).toMatch(
      /\[cut: the first \d+ of \d+ characters not shown \(earlier exceptions and frames\); call notebook_read/
    );
    expect(shown).toContain(
      'Cell In[5], line 2\n          1 print("top rows", len(top))\n    ----> 2 total = top["revenue"].sum()'
    );
    expect(shown).toMatch(/characters of library frames not shown[\s\S]*KeyError: 'revenue'\s*$/);
  });

  it('Explain says it edits nothing; a cell moved since is found by its id', async () => {
    const cells = SOURCES.map((_, i) =>
      cell(i, i === 4 ? [{ output_type: 'error', ename: 'KeyError', evalue: "'revenue'", traceback }] : [])
    );
    const moved = [{ id: 'md', cell_type: 'markdown' as const, source: '# Sales', metadata: {} }, ...cells];
    const block = await cellAssistBlock({
      notebookPath: 'sales.ipynb',
      cells: moved,
      assist: { action: 'explain', cell: 4, cellId: 'c5' },
      kernelFacts: async () => []
    });
    expect(block).toContain('Explain the error of cell [6] in sales.ipynb. Do not edit or run anything');
    expect(block).toContain('The kernel holds none of these names now');
  });
});
