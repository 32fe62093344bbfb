// Small helpers shared by the benchmarks: medians, process RSS, machine line.
import fs from 'node:fs';
import os from 'node:os';

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Resident set size of a live process in MiB (Linux /proc). */
export function rssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

export function machineLine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()} ${os.release()}`;
}

export const round = (x, digits = 1) => Number(x.toFixed(digits));

/**
 * The e2e tests' TypeScript helpers (test/support: a real JupyterLab, the JSON-RPC client
 * over /cellmate/ws, Debian's Chromium; the providers' HTTP stand-in) for a benchmark,
 * without a second copy: bundled once with esbuild (vite's dependency) into test/.build/,
 * where their repo-relative paths still hold.
 */
export async function loadTestSupport() {
  const { build } = await import('esbuild');
  const { fileURLToPath, pathToFileURL } = await import('node:url');
  const path = await import('node:path');
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const outfile = path.join(repo, 'test', '.build', 'support.mjs');
  await build({
    stdin: {
      contents: [
        "export { startJupyter } from './support/jupyter';",
        "export { connectRpc } from './support/rpc';",
        "export { launchBrowser, openLab, runCommand } from './support/browser';",
        "export { startProviderStandIn } from '../server/test/helpers/provider-stand-in';"
      ].join('\n'),
      resolveDir: path.join(repo, 'test'),
      loader: 'ts'
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'warning'
  });
  return import(pathToFileURL(outfile).href);
}

/** The p-th percentile (0–100) of xs. */
export function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
}
