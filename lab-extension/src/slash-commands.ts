/**
 * Slash commands in the composer: built-ins that drive the pane (`/plan`, `/agent`,
 * `/review`, `/compact`, `/clear`, `/export`, `/rewind`, `/model`, `/skills`, `/help`) and custom
 * commands, prompt templates the companion reads from `.cellmate/commands/*.md` and
 * `~/.cellmate/commands/*.md` (`commands/list`, `commands/expand`). A message that starts
 * with `/word` and a space or its end is a command; an unknown one is answered with a notice
 * instead of being sent, so a typo never reaches the model as a request. `/tmp/x.csv …` is
 * not a command (the name must end at a space). Pure apart from the host it drives.
 */
import type { ChatMode, CustomCommandInfo } from '@cellmate/protocol';

import type { CompletionTrigger, ICompletionCandidate } from './widgets/mention-popup';

/** A built-in command and its one-line help. */
export interface IBuiltinCommand {
  name: string;
  detail: string;
}

/** The built-ins, in the order `/help` and completion show them. */
export const BUILTIN_COMMANDS: readonly IBuiltinCommand[] = [
  { name: 'plan', detail: 'Switch this chat to Plan mode (read-only, ends in a plan)' },
  { name: 'agent', detail: 'Switch this chat to Agent mode' },
  { name: 'auto', detail: 'Switch Auto approval on or off for this chat (a reviewer clears routine calls)' },
  { name: 'review', detail: 'Review the workspace’s changes (git diff) in a new chat' },
  { name: 'compact', detail: 'Compact this conversation now' },
  { name: 'clear', detail: 'Start a new chat' },
  { name: 'export', detail: 'Export this chat to Markdown and a notebook' },
  { name: 'rewind', detail: 'Restore the files and notebooks of the latest turn that changed any (preview first)' },
  { name: 'model', detail: 'Show the model, or /model NAME to change it' },
  { name: 'skills', detail: 'Show the installed skills' },
  { name: 'help', detail: 'List the commands' }
];

/** `/word` typed at the very start of the message, up to the caret: completion applies. */
export const slashAt: CompletionTrigger = (text, caret) => {
  const m = /^\/([\w-]*)$/.exec(text.slice(0, caret));
  return m ? { start: 0, prefix: m[1] } : null;
};

/** The command a message runs, or null when it is ordinary text. */
export function parseSlash(text: string): { name: string; args: string } | null {
  const m = /^\/([A-Za-z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: m[1].toLowerCase(), args: (m[2] ?? '').trim() } : null;
}

/** Completion candidates for `prefix`: built-ins first, then custom commands. */
export function slashCandidates(prefix: string, custom: readonly CustomCommandInfo[]): ICompletionCandidate[] {
  const p = prefix.toLowerCase();
  const builtins = BUILTIN_COMMANDS.filter((c) => c.name.startsWith(p)).map((c) => ({
    kind: 'command',
    name: c.name,
    detail: c.detail
  }));
  const names = new Set(BUILTIN_COMMANDS.map((c) => c.name));
  const customs = custom
    .filter((c) => c.name.startsWith(p) && !names.has(c.name))
    .map((c) => ({
      kind: 'custom',
      name: c.name,
      detail: c.description || (c.source === 'home' ? '~/.cellmate/commands' : '.cellmate/commands')
    }));
  return [...builtins, ...customs];
}

/** What the commands drive. */
export interface ISlashHost {
  setMode(mode: ChatMode): Promise<void>;
  /** Switches Auto approval for the open chat (SIDE-1). */
  toggleAuto(): Promise<void>;
  startReview(): Promise<void>;
  compact(): Promise<void>;
  newChat(): Promise<void>;
  exportChat(): Promise<void>;
  /** Opens "Rewind to here" on the latest message whose turn changed files; false when none did. */
  rewind(): boolean;
  showSkills(): Promise<void>;
  /** The configured provider and model, e.g. `openai · gpt-4.1`. */
  modelLabel(): string;
  setModel(name: string): Promise<void>;
  /** Shows a line in the open transcript (not sent to the model). */
  notice(level: 'info' | 'error', text: string): void;
  customCommands(): Promise<CustomCommandInfo[]>;
  expand(name: string, args: string): Promise<string>;
  /** Sends a message as the person typed it. */
  send(text: string): Promise<boolean>;
}

/**
 * Runs `text` when it is a command. Resolves undefined for ordinary text (send it), true
 * when the composer may clear, false when it should keep the text.
 */
export async function runSlash(text: string, host: ISlashHost): Promise<boolean | undefined> {
  const parsed = parseSlash(text);
  if (!parsed) {
    return undefined;
  }
  const { name, args } = parsed;
  switch (name) {
    case 'plan':
      await host.setMode('plan');
      return true;
    case 'agent':
      await host.setMode('agent');
      return true;
    case 'auto':
      await host.toggleAuto();
      return true;
    case 'review':
      await host.startReview();
      return true;
    case 'compact':
      await host.compact();
      return true;
    case 'clear':
      await host.newChat();
      return true;
    case 'export':
      await host.exportChat();
      return true;
    case 'rewind':
      if (!host.rewind()) {
        host.notice(
          'info',
          'Nothing to rewind: no turn of this chat changed files or notebooks (or their changes were already undone).'
        );
      }
      return true;
    case 'skills':
      await host.showSkills();
      return true;
    case 'model':
      if (args) {
        await host.setModel(args);
      } else {
        host.notice('info', `Model: ${host.modelLabel()}. Type /model NAME to change it.`);
      }
      return true;
    case 'help': {
      const custom = await host.customCommands().catch(() => []);
      const lines = [
        ...BUILTIN_COMMANDS.map((c) => `/${c.name} — ${c.detail}`),
        ...custom.map(
          (c) =>
            `/${c.name} — ${c.description || 'custom command'} (${c.source === 'home' ? '~/.cellmate/commands' : '.cellmate/commands'})`
        )
      ];
      host.notice('info', `Commands:\n${lines.join('\n')}`);
      return true;
    }
  }
  const custom = await host.customCommands().catch(() => [] as CustomCommandInfo[]);
  if (!custom.some((c) => c.name === name)) {
    host.notice('error', `Unknown command /${name}: nothing was sent. Type /help for the commands.`);
    return false;
  }
  return host.send(await host.expand(name, args));
}
