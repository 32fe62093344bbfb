/**
 * The `tool()` bridge wire format (SPEC EVAL-5), carried as stdin `input_request` prompts
 * and `input_reply` values of the agent's own execute request: no port, no secret.
 *
 * Kernel → client (prompt): `cellmate-bridge/1 ` + JSON
 *   `{op:'call', id, part, parts, data}` — the JSON of `{name, args}`, split in `parts`
 *   slices of at most {@link TOOL_CHANNEL_CHUNK} characters; non-final parts are acked;
 *   `{op:'more', id, part}` — asks for slice `part` of the response.
 * Client → kernel (reply value): JSON `{parts, data}` — slice 0 of the response JSON
 *   `{ok:true, output, title} | {ok:false, error}`; the kernel asks for the rest.
 * Chunking keeps every message under Jupyter Server's 10 MiB WebSocket cap.
 */
export const TOOL_CHANNEL_PREFIX = 'cellmate-bridge/1 ';
/** Characters per slice (1 Mi). */
export const TOOL_CHANNEL_CHUNK = 1 << 20;

export type ToolChannelRequest =
  { op: 'call'; id: number; part: number; parts: number; data: string } | { op: 'more'; id: number; part: number };

/**
 * The registry's answer to one `tool()` call. `fullOutputFile`: absolute path of the
 * saved full output when the registry cut a long one (HARN-4), so `x = !cmd` can return
 * every line.
 */
export type ToolChannelResponse =
  { ok: true; output: string; title?: string; fullOutputFile?: string } | { ok: false; error: string };

/** Parses a prompt; undefined when it is not a bridge request (a plain `input()`). */
export function parseToolChannelPrompt(prompt: string): ToolChannelRequest | undefined {
  if (!prompt.startsWith(TOOL_CHANNEL_PREFIX)) return undefined;
  try {
    const v = JSON.parse(prompt.slice(TOOL_CHANNEL_PREFIX.length)) as ToolChannelRequest;
    if (v && (v.op === 'call' || v.op === 'more') && typeof v.id === 'number') return v;
  } catch {
    /* not ours */
  }
  return undefined;
}

/** Splits a string into slices of `size`. */
export function chunk(text: string, size = TOOL_CHANNEL_CHUNK): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts.length ? parts : [''];
}

/**
 * Client side of one kernel's bridge: reassembles calls, runs them with `run`, slices the
 * responses. One instance per execute request.
 */
export class ToolChannelEndpoint {
  private readonly incoming = new Map<number, string[]>();
  private readonly outgoing = new Map<number, string[]>();

  constructor(
    private readonly run: (name: string, args: unknown) => Promise<ToolChannelResponse>,
    private readonly chunkSize = TOOL_CHANNEL_CHUNK
  ) {}

  /** Answers one bridge request with the reply value. */
  async handle(req: ToolChannelRequest): Promise<string> {
    if (req.op === 'more') {
      const parts = this.outgoing.get(req.id) ?? [];
      const data = parts[req.part] ?? '';
      if (req.part >= parts.length - 1) this.outgoing.delete(req.id);
      return JSON.stringify({ parts: parts.length, data });
    }
    const got = this.incoming.get(req.id) ?? [];
    got[req.part] = req.data;
    if (req.part < req.parts - 1) {
      this.incoming.set(req.id, got);
      return JSON.stringify({ parts: 1, data: '', ack: true });
    }
    this.incoming.delete(req.id);
    let response: ToolChannelResponse;
    try {
      const call = JSON.parse(got.join('')) as { name?: unknown; args?: unknown };
      if (typeof call.name !== 'string') throw new Error('tool(name, args): name must be a string');
      response = await this.run(call.name, call.args ?? {});
    } catch (e) {
      response = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    const parts = chunk(JSON.stringify(response), this.chunkSize);
    if (parts.length > 1) this.outgoing.set(req.id, parts);
    return JSON.stringify({ parts: parts.length, data: parts[0] });
  }
}
