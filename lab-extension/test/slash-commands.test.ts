/** Slash commands: which text is a command, completion, and what each one drives. */
import type { ChatMode, CustomCommandInfo } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';

import { parseSlash, runSlash, slashAt, slashCandidates, type ISlashHost } from '../src/slash-commands';

function host(custom: CustomCommandInfo[] = [], canRewind = false) {
  const calls: string[] = [];
  const h: ISlashHost = {
    setMode: async (mode: ChatMode) => void calls.push(`mode ${mode}`),
    toggleAuto: async () => void calls.push('auto'),
    startReview: async () => void calls.push('review'),
    compact: async () => void calls.push('compact'),
    newChat: async () => void calls.push('new chat'),
    exportChat: async () => void calls.push('export'),
    rewind: () => (calls.push('rewind'), canRewind),
    showSkills: async () => void calls.push('skills'),
    modelLabel: () => 'openai · gpt-4.1',
    setModel: async (name) => void calls.push(`model ${name}`),
    notice: (level, text) => void calls.push(`${level}: ${text}`),
    customCommands: async () => custom,
    expand: async (name, args) => `expanded ${name} with ${args}`,
    send: async (text) => (calls.push(`send ${text}`), true)
  };
  return { h, calls };
}

describe('slash commands', () => {
  it('a command is /word at the start, ending at a space or the end; a path is text', () => {
    expect(parseSlash('/plan')).toEqual({ name: 'plan', args: '' });
    expect(parseSlash('  /model gpt-4o ')).toEqual({ name: 'model', args: 'gpt-4o' });
    expect(parseSlash('/tmp/data.csv looks odd')).toBeNull();
    expect(parseSlash('use /plan please')).toBeNull();
    expect(slashAt('/pl', 3)).toEqual({ start: 0, prefix: 'pl' });
    expect(slashAt('/plan x', 7)).toBeNull();
    expect(slashAt('a /pl', 5)).toBeNull();
  });

  it('completes built-ins, then custom commands, by prefix', () => {
    const custom: CustomCommandInfo[] = [
      { name: 'explain-df', description: 'Explain a DataFrame', source: 'workspace' },
      { name: 'plan', description: 'shadow', source: 'workspace' }
    ];
    expect(slashCandidates('', custom).map((c) => c.name)).toEqual([
      'plan',
      'agent',
      'auto',
      'review',
      'compact',
      'clear',
      'export',
      'rewind',
      'model',
      'skills',
      'help',
      'explain-df'
    ]);
    expect(slashCandidates('ex', custom)).toEqual([
      { kind: 'command', name: 'export', detail: 'Export this chat to Markdown and a notebook' },
      { kind: 'custom', name: 'explain-df', detail: 'Explain a DataFrame' }
    ]);
  });

  it('/rewind opens the rewind preview, or says there is nothing to rewind', async () => {
    const can = host([], true);
    expect(await runSlash('/rewind', can.h)).toBe(true);
    expect(can.calls).toEqual(['rewind']);
    const cannot = host([], false);
    expect(await runSlash('/rewind', cannot.h)).toBe(true);
    expect(cannot.calls).toEqual([
      'rewind',
      'info: Nothing to rewind: no turn of this chat changed files or notebooks (or their changes were already undone).'
    ]);
  });

  it('runs built-ins, expands custom commands, and never sends an unknown one', async () => {
    const { h, calls } = host([{ name: 'explain-df', description: '', source: 'workspace' }]);
    expect(await runSlash('/plan', h)).toBe(true);
    expect(await runSlash('/agent', h)).toBe(true);
    expect(await runSlash('/auto', h)).toBe(true);
    expect(await runSlash('/compact', h)).toBe(true);
    expect(await runSlash('/clear', h)).toBe(true);
    expect(await runSlash('/skills', h)).toBe(true);
    expect(await runSlash('/model', h)).toBe(true);
    expect(await runSlash('/model gpt-4o', h)).toBe(true);
    expect(await runSlash('/explain-df sales', h)).toBe(true);
    expect(await runSlash('/frobnicate now', h)).toBe(false);
    expect(await runSlash('hello /plan', h)).toBeUndefined();
    expect(calls).toEqual([
      'mode plan',
      'mode agent',
      'auto',
      'compact',
      'new chat',
      'skills',
      'info: Model: openai · gpt-4.1. Type /model NAME to change it.',
      'model gpt-4o',
      'send expanded explain-df with sales',
      'error: Unknown command /frobnicate: nothing was sent. Type /help for the commands.'
    ]);
  });
});
