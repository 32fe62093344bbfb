import type { Logger } from '../config/logger.js';
import { KernelManager } from './kernel-manager.js';
import { jupyterServerConnector } from './notebook-kernels.js';

/**
 * The server's kernel manager: private kernels always; shared notebook kernels when the
 * Jupyter server extension told us where Jupyter is (`CELLMATE_JUPYTER_URL`, and
 * `CELLMATE_JUPYTER_TOKEN` when it has one). Private kernels are bounded by
 * `CELLMATE_KERNEL_IDLE_MS` (idle reaping) and `CELLMATE_MAX_PRIVATE_KERNELS` (the cap).
 */
export function createKernelManager(opts: {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  chatTitle?: (chatId: string) => string | undefined;
}): KernelManager {
  const url = opts.env.CELLMATE_JUPYTER_URL?.trim();
  const positive = (name: string): number | undefined => {
    const raw = opts.env[name]?.trim();
    if (!raw) return undefined;
    const n = Number(raw);
    if (Number.isInteger(n) && n > 0) return n;
    opts.logger.warn(`ignoring ${name}=${JSON.stringify(raw)}: not a positive integer`);
    return undefined;
  };
  return new KernelManager({
    workspace: opts.workspace,
    env: opts.env,
    idleMs: positive('CELLMATE_KERNEL_IDLE_MS'),
    maxPrivateKernels: positive('CELLMATE_MAX_PRIVATE_KERNELS'),
    chatTitle: opts.chatTitle,
    onReaped: (chatId, language) => opts.logger.info(`stopped the idle private ${language} kernel of chat ${chatId}`),
    ...(url
      ? {
          connectNotebookKernel: jupyterServerConnector({
            baseUrl: url,
            token: opts.env.CELLMATE_JUPYTER_TOKEN ?? '',
            logger: opts.logger
          })
        }
      : {})
  });
}
