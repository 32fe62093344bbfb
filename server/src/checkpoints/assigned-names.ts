/**
 * The names a Python cell binds at its top level — assignments, `def`, `class`, imports,
 * `for`/`with … as` targets — from the notebook def/use facts (`structural/graph/def-use.ts`).
 * A rewind names them: undoing the cells does not unset them in the kernel.
 */
import { cellNames } from '../structural/graph/def-use.js';

/** Top-level names `source` binds, in order, each once. IPython magic and shell lines are skipped. */
export async function assignedNames(source: string): Promise<string[]> {
  const [names] = await cellNames([{ cellType: 'code', source }]);
  return names?.binds ?? [];
}
