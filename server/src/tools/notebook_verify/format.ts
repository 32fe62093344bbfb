/** The model's text of a `notebook_verify` run: one line per notebook, then what failed or changed. */
import type { NotebookVerdict } from '../../verify/verdicts.js';
import { VERIFY_DIR } from '../../verify/verify-notebooks.js';

const MARK: Record<NotebookVerdict['status'], string> = {
  ok: '✓',
  error: '✗',
  changed: '~',
  'could-not-run': '!',
  aborted: '■'
};

const cellName = (c: { index: number; id: string }): string =>
  `cell ${c.index + 1}${c.id.startsWith('#') ? '' : ` [id=${c.id}]`}`;

/** Title and text of a run. */
export function formatVerify(
  runId: string,
  notebooks: readonly NotebookVerdict[],
  opts: { withheld?: number; idleTimeoutMs: number }
): { title: string; output: string } {
  const count = (s: NotebookVerdict['status']): number => notebooks.filter((n) => n.status === s).length;
  const parts = (['ok', 'error', 'changed', 'could-not-run', 'aborted'] as const)
    .filter((s) => count(s) > 0)
    .map((s) => `${count(s)} ${s}`);
  const lines = [
    `notebook_verify: ${notebooks.length} notebook${notebooks.length === 1 ? '' : 's'} in fresh kernels — ${parts.join(', ')}.`
  ];
  for (const n of notebooks) {
    const cells = n.cells;
    const ran = cells.filter((c) => c.status !== 'not-run').length;
    lines.push(
      `${MARK[n.status]} ${n.path}: ${n.status} (${ran}/${cells.length} code cells run, ${n.seconds.toFixed(1)} s${n.kernel ? `, ${n.kernel}` : ''})${n.reason && n.status !== 'error' ? ` — ${n.reason}` : ''}`
    );
    for (const c of cells) {
      if (c.status === 'error' && c.error) {
        lines.push(`    ${cellName(c)}: ${c.error.ename}: ${c.error.evalue}`);
        for (const f of c.error.frames) lines.push(...f.split('\n').map((l) => `      ${l}`));
      } else if (c.status === 'changed') lines.push(`    ${cellName(c)} changed: ${c.difference}`);
    }
    const notRun = cells.filter((c) => c.status === 'not-run');
    if (notRun.length && n.status === 'error')
      lines.push(
        `    not run after the error: ${notRun.map((c) => c.index + 1).join(', ')} (continue_on_error: true runs them)`
      );
  }
  if (opts.withheld) lines.push(`${opts.withheld} notebook(s) withheld by the policy were not run.`);
  const kept = notebooks.some((n) => n.outputsPath);
  lines.push(
    `No notebook was written. ${kept ? `The new outputs are kept under ${VERIFY_DIR}/${runId}/; only the person can accept them into the notebooks ("Accept new outputs" on the card).` : ''}`.trim()
  );
  if (notebooks.some((n) => n.cells.some((c) => c.error?.ename === 'IdleTimeout')))
    lines.push(`A cell silent for ${Math.round(opts.idleTimeoutMs / 1000)} s is interrupted (the idle budget).`);
  const bad = count('error') + count('could-not-run');
  const title = `verify ${notebooks.length} notebook${notebooks.length === 1 ? '' : 's'}: ${bad ? `${bad} failing` : count('changed') ? `${count('changed')} changed` : count('aborted') ? 'stopped' : 'all ok'}`;
  return { title, output: lines.join('\n') };
}
