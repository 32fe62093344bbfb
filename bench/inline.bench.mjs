// inline: what Cellmate adds to an inline completion, typed as a person types in a real
// JupyterLab notebook (Debian's Chromium, a real ipykernel), against a stand-in
// OpenAI-compatible model that answers every request after a fixed 200 ms.
//
//   npm run bench -- inline [ROUNDS=8]
//
// Each round types a line in bursts (60 ms between keys, below the 250 ms debounce), with
// pauses long enough for a suggestion to show (900 ms) and pauses that end while the model
// is still computing (330 ms: the next key must cancel that request). The stand-in's answer
// names its request (`# r<n>`), so each ghost text is matched to the request it came from.
//
// overhead_ms_p50: ghost text on screen (a MutationObserver in the page) − the stand-in
//                  sending its answer, for every suggestion shown;
// requests:        completion requests the model server received;
// cancelled:       requests whose client went away before the answer (the abort reached it);
// stale_shown:     suggestions shown while the cell no longer held the text they were asked for.
//
// Last line: inline: overhead_ms_p50=<n> requests=<n> cancelled=<n> stale_shown=<n>
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTestSupport, machineLine, median, percentile, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!fs.existsSync(path.join(repo, 'server', 'dist', 'main.js'))) {
  console.error('server/dist is missing: run scripts/setup first');
  process.exit(1);
}
const ROUNDS = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 8);
const MODEL_DELAY_MS = 200;
const KEY_MS = 60;
const SHOW_PAUSE_MS = 900;
const CANCEL_PAUSE_MS = 330;
/** One round: text typed in bursts, each followed by a pause that lets a suggestion show or cancels it. */
const ROUND = [
  ['df.', SHOW_PAUSE_MS],
  ['gro', CANCEL_PAUSE_MS],
  ['upby("ci', SHOW_PAUSE_MS],
  ['ty")["sa', CANCEL_PAUSE_MS],
  ['les"].', SHOW_PAUSE_MS],
  ['su', CANCEL_PAUSE_MS],
  ['m()', SHOW_PAUSE_MS]
];

const { startJupyter, launchBrowser, openLab, runCommand, startProviderStandIn } = await loadTestSupport();

const promptOf = (request) =>
  (request.body.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
const isInline = (request) => promptOf(request).includes('Current cell:');
let inlineIndex = 0;
const standIn = await startProviderStandIn(
  'openai-compatible',
  (request) => ({ text: isInline(request) ? `# r${(request.inlineIndex = inlineIndex++)}` : 'ok' }),
  {
    models: ['main-model', 'fast-model'],
    delayMs: MODEL_DELAY_MS
  }
);
const notebook = JSON.stringify({
  cells: [
    {
      cell_type: 'code',
      id: 'load',
      metadata: {},
      outputs: [],
      execution_count: null,
      source:
        'import pandas as pd\ndf = pd.DataFrame({"city": ["Lyon"], "month": [1], "sales": [265.0], "returns": [3]})'
    },
    { cell_type: 'code', id: 'work', metadata: {}, outputs: [], execution_count: null, source: '' }
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
});
const jupyter = await startJupyter({
  env: standIn.env,
  files: { 'bench.ipynb': notebook },
  cellmateSettings: {
    provider: 'openai-compatible',
    model: 'main-model',
    baseUrl: standIn.settings.baseUrl,
    fastModel: { provider: 'openai-compatible', model: 'fast-model', baseUrl: standIn.settings.baseUrl },
    inlineCompletions: true
  }
});
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await openLab(page, jupyter.labUrl);
  await runCommand(page, 'cellmate:open-chat');
  await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 60_000 });
  await runCommand(page, 'docmanager:open', { path: 'bench.ipynb' });
  await page.waitForFunction(
    () => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle',
    undefined,
    { timeout: 60_000 }
  );
  const cell = (n) => page.locator('.jp-Notebook .jp-Cell').nth(n);
  await cell(0).click();
  await runCommand(page, 'notebook:run-cell-and-select-next');
  await cell(0).locator('.jp-InputPrompt', { hasText: '[1]' }).waitFor({ timeout: 60_000 });
  await page.locator('.jp-cellmate-kernel-binding[data-origin="notebook"]').waitFor({ timeout: 60_000 });
  // Every ghost text the page shows: when it enters the DOM (MutationObserver: the overhead),
  // and what each painted frame shows with what the cell held then (rAF: staleness — a ghost
  // CodeMirror re-renders for one update before the completer drops it is never painted).
  await page.evaluate(() => {
    window.__ghosts = [];
    window.__frames = [];
    const seen = new Map();
    const source = () =>
      window.jupyterapp.shell.currentWidget?.content?.activeCell?.model.sharedModel.getSource() ?? '';
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('.jp-Notebook .jp-GhostText')) {
        const text = el.textContent ?? '';
        if (!text || seen.get(el) === text) continue;
        seen.set(el, text);
        window.__ghosts.push({ at: Date.now(), text });
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
    let last = '';
    const frame = () => {
      const shown = [...document.querySelectorAll('.jp-Notebook .jp-GhostText')]
        .map((el) => el.textContent ?? '')
        .filter(Boolean);
      const key = `${shown.join('\u0000')}\u0001${shown.length ? source() : ''}`;
      if (shown.length && key !== last) window.__frames.push({ texts: shown, source: source() });
      last = key;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
  await cell(1).locator('.cm-content').click();
  // Warm-up: the companion's first connection to the kernel and the provider's first load.
  await page.keyboard.type('df.', { delay: KEY_MS });
  await page.waitForTimeout(4_000);
  await page.keyboard.press('Enter');
  const warm = standIn.requests.length;
  await page.evaluate(() => {
    window.__ghosts = [];
    window.__frames = [];
  });

  for (let r = 0; r < ROUNDS; r++) {
    for (const [text, pause] of ROUND) {
      await page.keyboard.type(text, { delay: KEY_MS });
      await page.waitForTimeout(pause);
    }
    await page.keyboard.press('Escape'); // dismiss a suggestion rather than accept it
    await runCommand(page, 'notebook:enter-edit-mode');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(SHOW_PAUSE_MS);
  }
  await page.waitForTimeout(1_000);
  const ghosts = await page.evaluate(() => window.__ghosts);
  const frames = await page.evaluate(() => window.__frames);
  const measured = standIn.requests.slice(warm).filter(isInline);
  const byIndex = new Map(measured.filter((q) => q.inlineIndex !== undefined).map((q) => [q.inlineIndex, q]));
  const overheads = [];
  let stale = 0;
  const counted = new Set();
  const askedText = (request) =>
    /Current cell:\n# %%\n([\s\S]*?)\n\n(?:Cells below:|<\/notebook>)/
      .exec(promptOf(request))?.[1]
      ?.replace('<CURSOR>', '');
  for (const g of ghosts) {
    const request = byIndex.get(Number(/# r(\d+)/.exec(g.text)?.[1]));
    if (request?.answeredAt && !counted.has(request)) {
      counted.add(request);
      overheads.push(g.at - request.answeredAt);
    }
  }
  for (const f of frames) {
    for (const text of f.texts) {
      const request = byIndex.get(Number(/# r(\d+)/.exec(text)?.[1]));
      const asked = request ? askedText(request) : undefined;
      if (asked === undefined || asked === f.source) continue;
      stale++;
      if (process.env.INLINE_BENCH_DEBUG) console.log('stale', JSON.stringify({ ghost: text, asked, held: f.source }));
    }
  }
  const cancelled = measured.filter((q) => q.aborted).length;
  console.log(machineLine());
  console.log(
    `load average: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`
  );
  console.log(
    `rounds ${ROUNDS}, model delay ${MODEL_DELAY_MS} ms, ${ghosts.length} ghost texts seen, ${frames.length} painted, ${overheads.length} suggestions matched to their answer`
  );
  if (overheads.length)
    console.log(
      `overhead ms: p50 ${round(median(overheads))}, p90 ${round(percentile(overheads, 90))}, max ${round(Math.max(...overheads))}`
    );
  console.log(
    `inline: overhead_ms_p50=${overheads.length ? round(median(overheads)) : 'NaN'} requests=${measured.length} cancelled=${cancelled} stale_shown=${stale}`
  );
} finally {
  await browser.close();
  await jupyter.stop();
  await standIn.close();
}
