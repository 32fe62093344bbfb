import { defineConfig } from 'vitest/config';

/**
 * Two projects:
 * - `unit`: package tests beside each package (`<pkg>/test/**`); real processes allowed
 *   (ipykernel, the JS kernel) but no browser and no JupyterLab.
 * - `e2e`: cross-package tests in `test/`, against a real JupyterLab (and Chromium);
 *   they need `scripts/setup` to have run (the README's test command does that).
 * No automatic retries anywhere: a flaky test is a bug.
 */
export default defineConfig({
  test: {
    retry: 0,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{protocol,server,kernel-bridge,lab-extension}/test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          hookTimeout: 60_000
        }
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // A poll waits for the page to reach a state; vitest's default gives up after 1 s,
          // shorter than one JupyterLab round trip on a loaded 2-core machine.
          expect: { poll: { timeout: 30_000 } },
          // One JupyterLab at a time on a 2-core machine.
          fileParallelism: false
        }
      }
    ]
  }
});
