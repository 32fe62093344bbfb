/**
 * `code_graph` (SPEC INTEL-1/2) through the real registry on a fixture repo with `.py`,
 * `.ts` and `.ipynb`: impact of a helper lists its transitive callers across files and
 * cells; updates re-parse only changed files; structural search (ast-grep's native
 * tree-sitter) and the graph (web-tree-sitter + the pinned grammar .wasm) agree on what a
 * call is.
 */
import { utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from '@ast-grep/napi';
import { Parser } from 'web-tree-sitter';
import { describe, expect, it } from 'vitest';
import { astGrepLanguage } from '../../src/structural/ast-languages.js';
import { extract } from '../../src/structural/graph/extract.js';
import { loadGrammar } from '../../src/structural/graph/grammars.js';
import { CodeGraphs } from '../../src/structural/graph/code-graph.js';
import { createCodeGraphTool } from '../../src/tools/code_graph/code_graph.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { codeCell, fixtureRepo, notebookJson } from './fixture.js';

const ctxFor = (workspace: string) => ({
  workspace,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId: 'c'
});

const FILES = {
  'lib/helpers.py': 'def helper(x):\n    return x + 1\n\ndef unrelated():\n    return 2\n',
  'lib/process.py':
    'from lib.helpers import helper\n\nclass Job:\n    def run(self):\n        return helper(3)\n\ndef process(items):\n    return [helper(i) for i in items]\n',
  'app/main.py':
    'from lib.process import process, Job\n\ndef main():\n    process([1])\n    Job().run()\n\nif __name__ == "__main__":\n    main()\n',
  'web/helper.ts': 'export function helper(x: number) { return x; }\nexport const wrap = (y: number) => helper(y);\n',
  'analysis.ipynb': notebookJson([
    codeCell('setup', '%load_ext autoreload\nfrom lib.process import process\n'),
    codeCell('use', 'def summarize(data):\n    return process(data)\n'),
    codeCell('top', 'summarize([1, 2])\n# helper(0) in a comment\ns = "helper(1)"\n')
  ])
};

describe('code_graph (INTEL-1/2)', () => {
  it('impact of a helper lists its transitive callers across files and notebook cells, by depth', async () => {
    const ws = await fixtureRepo(FILES);
    const registry = new ToolRegistry([createCodeGraphTool(new CodeGraphs())]);
    const r = await registry.call('code_graph', { action: 'impact', symbol: 'helper', path: '.' }, ctxFor(ws));
    expect(r.output).toBe(
      [
        'depth 1: Job.run at lib/process.py:5 (calls helper)',
        'depth 1: process at lib/process.py:8 (calls helper)',
        'depth 1: wrap at web/helper.ts:2 (calls helper)',
        'depth 2: summarize at analysis.ipynb cell #2 (id use) line 2 (calls process)',
        'depth 2: main at app/main.py:4 (calls process)',
        'depth 3: <module> at analysis.ipynb cell #3 (id top) line 1 (calls summarize)',
        'depth 3: <module> at app/main.py:8 (calls main)',
        '(7 transitive callers in 4 files of helper (defined at lib/helpers.py:1, web/helper.ts:1))'
      ].join('\n')
    );
    const symbols = await registry.call('code_graph', { action: 'symbols', path: 'lib/process.py' }, ctxFor(ws));
    expect(symbols.output).toBe(
      'lib/process.py:3 class Job\nlib/process.py:4 method Job.run\nlib/process.py:7 function process\n(3 definitions)'
    );
    const callees = await registry.call('code_graph', { action: 'callees', symbol: 'main' }, ctxFor(ws));
    expect(callees.output).toBe(
      'app/main.py:4 main → process\napp/main.py:5 main → run\napp/main.py:5 main → Job\n(3 calls of main (defined at app/main.py:3))'
    );
    expect((await registry.call('code_graph', { action: 'callers', symbol: 'nope' }, ctxFor(ws))).output).toMatch(
      /^No definition named "nope"/
    );
  });

  it('updates incrementally: only a changed file is parsed again, and its new edges show', async () => {
    const ws = await fixtureRepo(FILES);
    const graphs = new CodeGraphs();
    const registry = new ToolRegistry([createCodeGraphTool(graphs)]);
    await registry.call('code_graph', { action: 'symbols' }, ctxFor(ws));
    const graph = graphs.of(ws);
    expect(graph.parsedFiles).toBe(5);
    await registry.call('code_graph', { action: 'symbols' }, ctxFor(ws));
    expect(graph.parsedFiles).toBe(5);
    const file = path.join(ws, 'lib/helpers.py');
    await writeFile(file, `${FILES['lib/helpers.py']}\ndef extra():\n    return unrelated()\n`);
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    const callers = await registry.call('code_graph', { action: 'callers', symbol: 'unrelated' }, ctxFor(ws));
    expect(graph.parsedFiles).toBe(6);
    expect(callers.output).toBe(
      'lib/helpers.py:8 extra → unrelated\n(1 call site of unrelated (defined at lib/helpers.py:4))'
    );
  });

  it('structural search and the graph agree on what a call is (same Python grammar, INTEL-2)', async () => {
    const source = [
      'import os',
      'f(1)',
      'a.b.c(2)(3)',
      'x = [g(i) for i in h()]',
      '@deco(1)',
      'def k(p=dflt()):',
      '    return lambda: m(n(p))',
      'class C(Base(1)):',
      '    y = z()',
      's = "q(1)"  # r(2)',
      'await w()',
      'print(*args, **kw)',
      ''
    ].join('\n');
    const grammar = await loadGrammar('python');
    const parser = new Parser();
    parser.setLanguage(grammar);
    const tree = parser.parse(source)!;
    const graphCalls = extract(tree, 'python')
      .calls.map((c) => `${c.line}:${c.callee}`)
      .sort();
    tree.delete();
    const sgCalls = parse(astGrepLanguage('python'), source)
      .root()
      .findAll({ rule: { kind: 'call' } })
      .map((n) => {
        const fn = n.field('function' as never) as unknown as {
          kind(): string;
          text(): string;
          field(f: string): { text(): string } | null;
        } | null;
        const name =
          fn?.kind() === 'identifier'
            ? fn.text()
            : fn?.kind() === 'attribute'
              ? fn.field('attribute')?.text()
              : undefined;
        return name ? `${n.range().start.line + 1}:${name}` : undefined;
      })
      .filter((x): x is string => x !== undefined)
      .sort();
    expect(graphCalls).toEqual(sgCalls);
    expect(graphCalls).toEqual(
      ['11:w', '12:print', '2:f', '3:c', '4:g', '4:h', '5:deco', '6:dflt', '7:m', '7:n', '8:Base', '9:z'].sort()
    );
  });
});
