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
