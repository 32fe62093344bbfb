/**
 * What the pane asks the companion for on the way: `@` completions, instruction files,
 * custom slash commands, skills, MCP servers, tool metrics, and the open chat's workers.
 * Lookups that feed a popup answer "nothing" while disconnected rather than failing.
 */
import type {
  CustomCommandInfo,
  InstructionFileInfo,
  McpServerStatus,
  MentionCandidate,
  SkillInfo,
  ToolMetrics,
  TranscriptItem,
  WorkerSummary
} from '@cellmate/protocol';

import { PaneState } from './pane-state';

/** The companion's lists and lookups the pane shows. */
export class Lookups {
  constructor(private readonly _pane: PaneState) {}

  /** `@` completion candidates for the composer; none when not connected. */
  async complete(prefix: string): Promise<MentionCandidate[]> {
    const chatId = this._pane.chatId;
    try {
      const r = await this._pane.connection.request('context/complete', chatId ? { chatId, prefix } : { prefix });
      return Array.isArray(r?.items) ? r.items : [];
    } catch {
      return [];
    }
  }

  /**
   * The instruction files the open chat's next turn reads, for the focused notebook (SKILL-1);
   * none while disconnected.
   */
  async instructions(): Promise<InstructionFileInfo[]> {
    const pane = this._pane;
    if (!pane.connected) {
      return [];
    }
    const chatId = pane.chatId;
    const notebookPath = pane.context?.()?.notebookPath;
    try {
      const r = await pane.connection.request('instructions/list', {
        ...(chatId ? { chatId } : {}),
        ...(notebookPath ? { notebookPath } : {})
      });
      return r.files;
    } catch {
      return [];
    }
  }

  /** Custom slash commands (`.cellmate/commands/*.md`, `~/.cellmate/commands/*.md`); none while disconnected. */
  async customCommands(): Promise<CustomCommandInfo[]> {
    if (!this._pane.connected) {
      return [];
    }
    return this._pane.connection.request('commands/list', {});
  }

  /** The message a custom command sends. */
  async expandCommand(name: string, args: string): Promise<string> {
    return (await this._pane.connection.request('commands/expand', { name, arguments: args })).text;
  }

  /** Installed skills with their source and state (SKILL-2/3). */
  skills(): Promise<SkillInfo[]> {
    return this._pane.connection.request('skills/list', {});
  }

  /** Turns a skill on or off for the person; answers with the list afterwards. */
  setSkillEnabled(folder: string, enabled: boolean): Promise<SkillInfo[]> {
    return this._pane.connection.request('skills/set-enabled', { folder, enabled });
  }

  /** The configured MCP servers and their state. */
  mcpServers(): Promise<McpServerStatus[]> {
    return this._pane.connection.request('mcp/servers', {});
  }

  /** What is wrong with the MCP config files, one sentence each. */
  mcpConfigProblems(): Promise<string[]> {
    return this._pane.connection.request('mcp/config-problems', {});
  }

  /** Per-tool metrics from the audit log (all chats, or one). */
  metrics(chatId?: string): Promise<ToolMetrics> {
    return this._pane.connection.request('audit/metrics', chatId ? { chatId } : {});
  }

  /** Kills a worker of the open chat (the workers list's Kill). */
  killWorker(workerId: string): Promise<{ killed: boolean; message: string }> {
    return this._pane.connection.request('worker/kill', { chatId: this._pane.workers.chatId ?? '', workerId });
  }

  /** A worker's transcript, read-only. */
  workerTranscript(workerId: string): Promise<{ worker: WorkerSummary; items: TranscriptItem[] }> {
    return this._pane.connection.request('worker/get', { chatId: this._pane.workers.chatId ?? '', workerId });
  }
}
