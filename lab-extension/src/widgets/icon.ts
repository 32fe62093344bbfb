/**
 * Cellmate's icon: a notebook cell with a speech tail. Uses `jp-icon3` so it follows
 * the theme like JupyterLab's own icons.
 */
import { LabIcon } from '@jupyterlab/ui-components';

const svgstr = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 3h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2h-7.2L8 21v-4H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm0 2v10h6v2.1L12.2 15H20V5H4z"/>
    <path d="M6 7.5h2.2l-1.1 1.6zM9.5 8h8v1.6h-8zM6 11h12v1.6H6z"/>
  </g>
</svg>`;

export const cellmateIcon = new LabIcon({ name: 'jupyterlab-cellmate:icon', svgstr });
