/**
 * Where the shipped language servers are searched (workspace/tool-bins.ts): the npm packages' `.bin`
 * (a checkout, or the wheel bundle's shims) and `$CELLMATE_TOOL_BINS`, which
 * jupyterlab_cellmate sets to its environment's scripts folder (PyPI basedpyright, issue #13).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledServerBins } from '../../src/workspace/tool-bins.js';
import { locateCommand } from '../../src/lsp/locate.js';

describe('bundledServerBins', () => {
  it("lists the installed servers' .bin, then each absolute $CELLMATE_TOOL_BINS folder (empty and relative parts ignored, as on PATH)", () => {
    const bins = bundledServerBins({ CELLMATE_TOOL_BINS: ['/opt/venv/bin', '', 'relative/bin'].join(path.delimiter) });
    expect(bins.at(-1)).toBe('/opt/venv/bin');
    expect(bins).not.toContain(path.resolve('relative/bin'));
    expect(bins[0]).toMatch(/node_modules[/\\]\.bin$/);
    expect(bundledServerBins({})).not.toContain('/opt/venv/bin');
  });

  it('a command only in a $CELLMATE_TOOL_BINS folder resolves when that folder is not on PATH', async () => {
    const folder = path.dirname(process.execPath); // holds an executable `node`
    const search = (env: NodeJS.ProcessEnv) => ({
      root: '/nonexistent',
      workspace: '/nonexistent',
      pathEnv: '/nonexistent-path',
      bundledBins: bundledServerBins(env),
      trusted: false
    });
    expect(await locateCommand(path.basename(process.execPath), search({ CELLMATE_TOOL_BINS: folder }))).toBe(
      path.join(folder, path.basename(process.execPath))
    );
    expect(await locateCommand(path.basename(process.execPath), search({}))).toBeUndefined();
    expect(await locateCommand('no-such-language-server', search({ CELLMATE_TOOL_BINS: folder }))).toBeUndefined();
  });
});
