/**
 * The companion as composed for real, in this process (stdio; without `kernels`, every
 * built-in tool but eval), its provider aimed at a provider stand-in (`provider-stand-in.ts`). A test
 * file calls {@link closeStandInCompanions} in its `afterEach`, which ends both.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { startServer, type ServerHandle } from '../../src/server.js';
import {
  startProviderStandIn,
  type ProviderStandIn,
  type StandInOptions,
  type StandInResponder,
  type StandInStep,
  type WireProvider
} from './provider-stand-in.js';

/** A running companion and the stand-in its provider reaches. */
export interface StandInCompanion {
  server: ServerHandle;
  standIn: ProviderStandIn;
}

const running: StandInCompanion[] = [];

/**
 * Starts a stand-in for `provider` answering with `steps`, then a companion on `ws` whose
 * environment has the stand-in's key, no config file (`<ws>/no-config.json`) and `env`;
 * `kernels`: private ipykernel kernels for `eval` (`CELLMATE_PYTHON` in `env`).
 */
export async function startStandInCompanion(
  ws: string,
  provider: WireProvider,
  steps: readonly StandInStep[] | StandInResponder,
  options: { standIn?: StandInOptions; env?: Record<string, string>; kernels?: boolean } = {}
): Promise<StandInCompanion> {
  const standIn = await startProviderStandIn(provider, steps, options.standIn);
  let server: ServerHandle;
  try {
    server = await startServer({
      workspace: ws,
      stdio: { input: new PassThrough(), output: new PassThrough() },
      ...(options.kernels ? {} : { kernels: false as const }),
      maxRetries: 0,
      fetch: standIn.fetch,
      env: {
        ...standIn.env,
        PATH: process.env.PATH ?? '',
        CELLMATE_CONFIG: path.join(ws, 'no-config.json'),
        ...options.env
      }
    });
  } catch (error) {
    await standIn.close();
    throw error;
  }
  const started = { server, standIn };
  running.push(started);
  return started;
}

/** Disposes every companion started since the last call, then closes its stand-in. */
export async function closeStandInCompanions(): Promise<void> {
  for (const { server, standIn } of running.splice(0)) {
    await server.dispose();
    await standIn.close();
  }
}
