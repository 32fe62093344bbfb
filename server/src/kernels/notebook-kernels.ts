import { JupyterServerKernelClient } from '@cellmate/kernel-bridge';
import type { Logger } from '../config/logger.js';
import type { NotebookKernelConnector } from './kernel-manager.js';

/** Connects to notebook kernels through Jupyter Server with its token (our own WebSocket). */
export function jupyterServerConnector(opts: {
  baseUrl: string;
  token: string;
  logger: Logger;
}): NotebookKernelConnector {
  return async (ref) => {
    const client = await JupyterServerKernelClient.connect({
      baseUrl: opts.baseUrl,
      token: opts.token,
      kernelId: ref.id,
      kernelName: ref.name
    });
    opts.logger.info(
      `eval: connected to notebook kernel ${ref.id} (${ref.name}${ref.notebookPath ? `, ${ref.notebookPath}` : ''})`
    );
    return {
      client,
      onRestart: (listener) => void client.onRestart(listener),
      restart: () => client.restart()
    };
  };
}
