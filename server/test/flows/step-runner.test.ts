/**
 * The one step runner approved plans (SPEC MODE-3) and orchestrations (SPEC MODE-5) share:
 * order, the first failure stopping the rest and naming its step, abort, width. The steps
 * here are plain async functions — the runner is pure scheduling; plan.test.ts and
 * orchestrate.test.ts drive it through real chat turns.
 */
import { describe, expect, it } from 'vitest';
import { runSteps, type RunnableStep, type StepOutcome } from '../../src/flows/step-runner.js';

const step = (key: string, depends_on: string[] = []): RunnableStep => ({ key, depends_on });
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/** A step body whose steps end when the test says so; records starts and the results each step saw. */
function gated(): {
  run: (s: RunnableStep, results: ReadonlyMap<string, StepOutcome>) => Promise<StepOutcome>;
  started: string[];
  saw: Map<string, string[]>;
  end(key: string, outcome?: StepOutcome): void;
} {
  const started: string[] = [];
  const saw = new Map<string, string[]>();
  const ends = new Map<string, (o: StepOutcome) => void>();
  return {
    started,
    saw,
    run: (s, results) => {
      started.push(s.key);
      saw.set(s.key, [...results.keys()]);
      return new Promise((resolve) => ends.set(s.key, resolve));
    },
    end: (key, outcome = { ok: true }) => {
      const resolve = ends.get(key);
      if (!resolve) throw new Error(`step ${key} has not started`);
      resolve(outcome);
    }
  };
}

describe('runSteps (SPEC MODE-3, MODE-5)', () => {
  it('MODE-3: runs the steps one at a time in the given order, each after the one before has ended, and reports every outcome', async () => {
    const g = gated();
    const states: string[] = [];
    const run = runSteps({
      steps: [step('a'), step('b', ['a']), step('c')],
      signal: new AbortController().signal,
      run: g.run,
      onState: (s, state) => states.push(`${s.key}:${state}`)
    });
    await tick();
    expect(g.started).toEqual(['a']);
    g.end('a');
    await tick();
    expect(g.started).toEqual(['a', 'b']);
    expect(g.saw.get('b')).toEqual(['a']); // b sees a's result
    g.end('b');
    await tick();
    g.end('c');
    const report = await run;
    expect(g.started).toEqual(['a', 'b', 'c']);
    expect(report.failed).toBeUndefined();
    expect([...report.results.keys()]).toEqual(['a', 'b', 'c']);
    expect(states).toEqual(['a:running', 'a:done', 'b:running', 'b:done', 'c:running', 'c:done']);
  });

  it('MODE-3: a step that does not finish stops the rest and the report names it, its index and its reason', async () => {
    const g = gated();
    const states: string[] = [];
    const steps = [step('load'), step('clean', ['load']), step('chart', ['clean'])];
    const run = runSteps({
      steps,
      signal: new AbortController().signal,
      run: g.run,
      onState: (s, state) => states.push(`${s.key}:${state}`)
    });
    await tick();
    g.end('load');
    await tick();
    g.end('clean', { ok: false, reason: 'its turn ended (error)' });
    const report = await run;
    expect(g.started).toEqual(['load', 'clean']);
    expect(report.failed).toEqual({
      step: steps[1],
      index: 1,
      outcome: { ok: false, reason: 'its turn ended (error)' }
    });
    expect(states).toEqual(['load:running', 'load:done', 'clean:running', 'clean:stopped']);
  });

  it('MODE-3: a step that throws is a failed step carrying the error; nothing after it starts', async () => {
    const boom = new Error('the model settings are unusable');
    const started: string[] = [];
    const report = await runSteps({
      steps: [step('a'), step('b')],
      signal: new AbortController().signal,
      run: async (s) => {
        started.push(s.key);
        throw boom;
      }
    });
    expect(started).toEqual(['a']);
    expect(report.failed?.step.key).toBe('a');
    expect(report.failed?.outcome).toEqual({ ok: false, reason: 'the model settings are unusable', error: boom });
  });

  it('MODE-5: abort starts no further step; the running one is awaited and the rest never start', async () => {
    const g = gated();
    const abort = new AbortController();
    const run = runSteps({ steps: [step('a'), step('b'), step('c')], signal: abort.signal, run: g.run });
    await tick();
    abort.abort();
    let done = false;
    void run.then(() => {
      done = true;
    });
    await tick();
    expect(done).toBe(false); // the running step is left to end (its executor hears the signal)
    g.end('a', { ok: false, skipped: true, reason: 'the run was stopped' });
    const report = await run;
    expect(g.started).toEqual(['a']);
    expect(report.failed?.step.key).toBe('a');
  });

  it('MODE-5: an aborted signal before the start runs nothing', async () => {
    const abort = new AbortController();
    abort.abort();
    const started: string[] = [];
    const report = await runSteps({
      steps: [step('a')],
      signal: abort.signal,
      run: async (s) => {
        started.push(s.key);
        return { ok: true };
      }
    });
    expect(started).toEqual([]);
    expect(report).toEqual({ results: new Map() });
  });

  it('MODE-5: with width 2, independent steps run together and a dependent one waits for both', async () => {
    const g = gated();
    const run = runSteps({
      steps: [step('a'), step('b'), step('c', ['a', 'b'])],
      width: 2,
      signal: new AbortController().signal,
      run: g.run
    });
    await tick();
    expect(g.started).toEqual(['a', 'b']);
    g.end('b');
    await tick();
    expect(g.started).toEqual(['a', 'b']); // c still waits for a
    g.end('a');
    await tick();
    expect(g.started).toEqual(['a', 'b', 'c']);
    g.end('c');
    expect((await run).failed).toBeUndefined();
  });

  it('MODE-5: when one of two running steps fails, the other is awaited and nothing new starts', async () => {
    const g = gated();
    const run = runSteps({
      steps: [step('a'), step('b'), step('c')],
      width: 2,
      signal: new AbortController().signal,
      run: g.run
    });
    await tick();
    g.end('a', { ok: false, reason: 'its turn ended (error)' });
    await tick();
    expect(g.started).toEqual(['a', 'b']);
    g.end('b');
    const report = await run;
    expect(report.failed?.step.key).toBe('a');
    expect(report.results.get('b')).toEqual({ ok: true });
    expect(g.started).not.toContain('c');
  });

  it('MODE-3: a step depending on a key that is not a step (a hand-edited file) is reported, not waited for', async () => {
    const report = await runSteps({
      steps: [step('a', ['ghost'])],
      signal: new AbortController().signal,
      run: async () => ({ ok: true })
    });
    expect(report.failed?.step.key).toBe('a');
    expect(report.failed?.outcome.reason).toBe('it depends on [ghost], which never finished');
  });
});
