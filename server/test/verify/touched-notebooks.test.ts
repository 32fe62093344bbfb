/**
 * Which notebooks a change touched (INTEL-1): the code graph's import edges — Python
 * absolute, relative and `from pkg import module` imports, from the notebook's own folder
 * or the workspace root, through other modules — and JavaScript relative imports.
 */
import { describe, expect, it } from 'vitest';
import { CodeGraph } from '../../src/structural/graph/code-graph.js';
import { touchedNotebooks, touchedText } from '../../src/verify/touched-notebooks.js';
import { codeCell, fixtureRepo, notebookJson } from '../structural/fixture.js';

describe('notebooks a change touched, through import edges (INTEL-1)', () => {
  it('changed notebooks, and notebooks importing a changed module directly or through other modules; not the others', async () => {
    const ws = await fixtureRepo({
      'pkg/__init__.py': '',
      'pkg/core.py': 'def f():\n    return 1\n',
      'pkg/api.py': 'from .core import f\n\ndef g():\n    return f()\n',
      'pkg/sub/deep.py': 'from .. import core\n',
      'nb/helpers.py': 'import pkg.core as core\n',
      'nb/a.ipynb': notebookJson([codeCell('a1', 'import os'), codeCell('a2', 'from pkg.api import g\ng()')]),
      'nb/b.ipynb': notebookJson([codeCell('b1', 'import helpers')]),
      'nb/c.ipynb': notebookJson([codeCell('c1', 'from pkg import sub')]),
      'nb/d.ipynb': notebookJson([codeCell('d1', 'import pkgcore\nimport json')]),
      'web/x.ts': "import { y } from './y.js';\n",
      'web/y.ts': 'export const y = 1;\n',
      'web/nb.ipynb': notebookJson([codeCell('j1', 'const m = require("./y")')], 'javascript')
    });
    const graph = new CodeGraph(ws);
    const signal = new AbortController().signal;
    const touched = await touchedNotebooks(graph, ['pkg/core.py', 'nb/d.ipynb'], signal);
    expect(touched).toEqual([
      { path: 'nb/d.ipynb', why: 'changed' },
      { path: 'nb/b.ipynb', why: 'imports nb/helpers.py in cell 1, which leads to the change' },
      { path: 'nb/a.ipynb', why: 'imports pkg/api.py in cell 2, which leads to the change' }
    ]);
    // `from pkg import sub` loads pkg/sub/__init__.py (none here), not pkg/sub/deep.py: not touched.
    expect(touched.map((t) => t.path)).not.toContain('nb/c.ipynb');
    expect(touchedText(touched)).toContain('notebook_verify {"notebooks":["nb/d.ipynb",');
    expect((await touchedNotebooks(graph, ['web/y.ts'], signal)).map((t) => t.path)).toEqual(['web/nb.ipynb']);
    expect(await touchedNotebooks(graph, ['README.md'], signal)).toEqual([]);
  }, 60_000);
});
