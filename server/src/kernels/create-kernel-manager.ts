import type { Logger } from '../config/logger.js';
import { KernelManager } from './kernel-manager.js';
import { jupyterServerConnector } from './notebook-kernels.js';

/**
 * The server's kernel manager: private kernels always; shared notebook kernels when the
 * Jupyter server extension told us where Jupyter is (`CELLMATE_JUPYTER_URL`, and
 * `CELLMATE_JUPYTER_TOKEN` when it has one).
 */
export function createKernelManager(opts: { workspace: string; env: NodeJS.ProcessEnv; logger: Logger }): KernelManager {
  const url = opts.env.CELLMATE_JUPYTER_URL?.trim();
  return new KernelManager({
    workspace: opts.workspace,
    env: opts.env,
    ...(url ? { connectNotebookKernel: jupyterServerConnector({ baseUrl: url, token: opts.env.CELLMATE_JUPYTER_TOKEN ?? '', logger: opts.logger }) } : {})
  });
}
