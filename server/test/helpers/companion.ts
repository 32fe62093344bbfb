import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The built companion's entry point. */
export const mainJs = path.join(serverDir, 'dist', 'main.js');

/** Builds the server (`tsc -b server`, incremental); throws with tsc's output on failure. */
export function buildServer(): void {
  const repoRoot = path.resolve(serverDir, '..');
  const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = spawnSync(process.execPath, [tsc, '-b', 'server'], { cwd: repoRoot, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`"tsc -b server" failed:\n${build.stdout}${build.stderr}`);
  if (!statSync(mainJs, { throwIfNoEntry: false })) throw new Error(`${mainJs} missing after build`);
}

/** A companion running as a child process (`node server/dist/main.js --socket …`). */
export interface Companion {
  proc: ChildProcess;
  stderr(): string;
  /** SIGKILL, resolved once the process is gone. */
  kill9(): Promise<void>;
}

/** Starts the built companion on `socketPath` and waits for its ready line. */
export async function startCompanion(
  workspace: string,
  socketPath: string,
  env: NodeJS.ProcessEnv = {}
): Promise<Companion> {
  const proc = spawn(process.execPath, [mainJs, '--socket', socketPath, '--workspace', workspace], {
    cwd: workspace,
    env: { PATH: process.env.PATH, HOME: workspace, CELLMATE_CONFIG: path.join(workspace, 'none.json'), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 20 s; stderr:\n${err}`)), 20_000);
    proc.stdout!.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.once('exit', (code) => reject(new Error(`companion exited (${code}) before ready; stderr:\n${err}`)));
  });
  return {
    proc,
    stderr: () => err,
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    }
  };
}
