import type { Script } from './scripted-script.js';

/**
 * The built-in offline demo (scripted provider, empty `scriptPath`): greets, reads
 * `README.md` through the real `read` tool, then explains how to configure a real model.
 * Every user message replays it.
 */
export const DEMO_SCRIPT: Script = {
  kind: 'every',
  steps: [
    {
      text:
        "Hi! I'm Cellmate running on the offline **scripted** provider: I replay a fixed script " +
        "instead of calling a model. Let me show a tool call by reading the workspace's README.md.",
      toolCalls: [{ toolName: 'read', input: { path: 'README.md' } }]
    },
    {
      text:
        'That was the `read` tool: the card above shows what it returned (or why it could not read the file). ' +
        "I can't actually summarise it, because this is a script, not a model.\n\n" +
        'To talk to a real model, open Settings → Cellmate and pick a provider:\n' +
        '- **openai**: set `OPENAI_API_KEY` in the environment that starts JupyterLab (or `apiKeys.openai` in `~/.cellmate/config.json`);\n' +
        '- **anthropic**: set `ANTHROPIC_API_KEY` (or `apiKeys.anthropic`);\n' +
        '- **openai-compatible** (Ollama, vLLM, llama.cpp, LM Studio): set the base URL, e.g. `http://127.0.0.1:11434/v1`.\n\n' +
        'Then restart JupyterLab so the companion server sees the key.'
    }
  ]
};
