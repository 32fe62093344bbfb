#!/usr/bin/env node
/**
 * Entry point of the JS kernel: `node dist/js-kernel/main.js -f <connection_file>`
 * (what `kernelspec/kernel.json` runs).
 */
import { inspect } from 'node:util';
import { readConnectionFile } from '../zmq/connection.js';
import { JsKernel } from './kernel.js';

function connectionFileArg(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-f' || a === '--connection-file') return argv[i + 1];
    if (a.startsWith('--connection-file=')) return a.slice('--connection-file='.length);
    if (a.startsWith('-f=')) return a.slice(3);
  }
  return undefined;
}

const file = connectionFileArg(process.argv.slice(2));
if (!file) {
  process.stderr.write('usage: node main.js -f <connection_file>\n');
  process.exit(2);
}

const kernel = await JsKernel.start(await readConnectionFile(file), { onShutdown: () => process.exit(0) });

// SIGINT is how Jupyter interrupts (kernelspec interrupt_mode "signal"). During the
// synchronous part of a cell V8's breakOnSigint handles it; otherwise this aborts the
// cell's wait. Either way the kernel keeps running.
process.on('SIGINT', () => kernel.interrupt());
process.on('SIGTERM', () => {
  void kernel.close().then(() => process.exit(0));
});

// Errors from callbacks a cell scheduled (timers, events) land here: report them on the
// notebook's stderr instead of killing the kernel.
const report = (what: string) => (e: unknown) => {
  const text =
    e instanceof Error || (typeof e === 'object' && e !== null && 'stack' in e)
      ? String((e as Error).stack)
      : inspect(e);
  void kernel.publish('stream', { name: 'stderr', text: `${what}: ${text}\n` });
};
process.on('uncaughtException', report('Uncaught exception'));
process.on('unhandledRejection', report('Unhandled promise rejection'));

// Like ipykernel's ParentPollerUnix: with JPY_PARENT_PID set (the companion sets it), the
// kernel exits when that process is gone (its parent changed), even after a kill -9.
const parentPid = Number(process.env.JPY_PARENT_PID);
if (Number.isInteger(parentPid) && parentPid > 1) {
  setInterval(() => {
    if (process.ppid !== parentPid) process.exit(0);
  }, 1_000).unref();
}
