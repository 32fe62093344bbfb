/**
 * Draws a call's arguments (`argumentFields`) as `dl.jp-cellmate-arg-fields`: each name, then
 * its value as text — in a `pre` when it is a block (several lines, long, nested data).
 */
import type { IArgumentField } from '../argument-fields';

/** The list of `fields`; `className` adds the caller's own hook. Values go in as text, never markup. */
export function renderArgumentFields(fields: readonly IArgumentField[], className = ''): HTMLElement {
  const list = document.createElement('dl');
  list.className = `jp-cellmate-arg-fields ${className}`.trim();
  for (const f of fields) {
    const name = document.createElement('dt');
    name.textContent = f.label;
    const value = document.createElement('dd');
    value.dataset.block = String(f.block);
    const text = document.createElement(f.block ? 'pre' : 'code');
    text.textContent = f.value;
    value.appendChild(text);
    list.append(name, value);
  }
  return list;
}
