/** A fixture repo with `.py`, `.ts` and `.ipynb` files for the structural tests. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../helpers/temp.js';

/** A code cell as nbformat 4.5 writes it, with an output and metadata that must survive. */
export function codeCell(id: string, source: string, output = `out ${id}`): Record<string, unknown> {
  const lines = source.split(/(?<=\n)/);
  return {
    cell_type: 'code',
    execution_count: 1,
    id,
    metadata: { tags: ['keep'], collapsed: false },
    outputs: [{ name: 'stdout', output_type: 'stream', text: [`${output}\n`] }],
    source: lines
  };
}

/** A Python notebook's JSON as Jupyter writes it (indent 1, trailing newline). */
export function notebookJson(cells: Array<Record<string, unknown>>, language = 'python'): string {
  return `${JSON.stringify(
    {
      cells,
      metadata: {
        kernelspec: { display_name: language, language, name: language === 'python' ? 'python3' : 'cellmate-js' },
        language_info: { name: language }
      },
      nbformat: 4,
      nbformat_minor: 5
    },
    null,
    1
  )}\n`;
}

/** Writes `files` into a fresh temporary workspace and returns its path. */
export async function fixtureRepo(files: Record<string, string>): Promise<string> {
  const ws = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(ws, name)), { recursive: true });
    await writeFile(path.join(ws, name), text);
  }
  return ws;
}
