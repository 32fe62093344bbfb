#!/usr/bin/env node
// Installs Cellmate's JS kernel as a Jupyter kernelspec:
//   node kernel-bridge/scripts/install-kernelspec.mjs <prefix>
// writes <prefix>/share/jupyter/kernels/cellmate-js/kernel.json, pointing at this
// checkout's dist/js-kernel/main.js (absolute) and the node running this script.
// Build first: `npx tsc -b kernel-bridge`. With a venv as prefix, `jupyter kernelspec
// list` run from that venv shows `cellmate-js`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const prefix = process.argv[2];
if (!prefix) {
  process.stderr.write('usage: install-kernelspec.mjs <prefix>   (e.g. .venv)\n');
  process.exit(2);
}
const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mainJs = join(pkg, 'dist', 'js-kernel', 'main.js');
if (!existsSync(mainJs)) {
  process.stderr.write(`${mainJs} is missing: build first with \`npx tsc -b kernel-bridge\`\n`);
  process.exit(1);
}
const template = JSON.parse(readFileSync(join(pkg, 'kernelspec', 'kernel.json'), 'utf8'));
const fill = (s) => s.replaceAll('@NODE@', process.execPath).replaceAll('@MAIN_JS@', mainJs);
const spec = {
  ...template,
  argv: template.argv.map(fill),
  metadata: { cellmate: { kernel: 'cellmate-js' } }
};
const dir = join(resolve(prefix), 'share', 'jupyter', 'kernels', 'cellmate-js');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'kernel.json'), JSON.stringify(spec, null, 2) + '\n');
process.stdout.write(`installed kernelspec cellmate-js in ${dir}\n`);
