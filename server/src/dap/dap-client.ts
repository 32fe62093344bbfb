/**
 * A DAP client over a Content-Length framed byte stream (DBG-6: the framing is the shared
 * one; this file only speaks DAP on its `MessageReader`/`MessageWriter`): typed requests
 * (`request<K>` → the response body, {@link DapRequestError} on `success: false`), events as
 * a typed signal, and reverse requests (`runInTerminal`, `startDebugging`) answered with a
 * refusal so an adapter never waits on us.
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Emitter, type Event, type Message, type MessageReader, type MessageWriter } from 'vscode-jsonrpc/node.js';
import { DapRequestError, type DapChannel, type DapCommand, type DapRequests, type DapResponses } from './protocol.js';
import { FramingError } from '../framing/index.js';

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

interface Pending {
  command: string;
  resolve: (body: unknown) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

export class DapClient implements DapChannel {
  private readonly events = new Emitter<DebugProtocol.Event>();
  private readonly closes = new Emitter<Error>();
  readonly onEvent: Event<DebugProtocol.Event> = this.events.event;
  readonly onClose: Event<Error> = this.closes.event;
  private seq = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWith: Error | undefined;
  private readonly subscriptions: Array<{ dispose(): void }>;

  /** `name` is the adapter, for messages (`debugpy`). */
  constructor(
    reader: MessageReader,
    private readonly writer: MessageWriter,
    private readonly name: string,
    /**
     * Close on end of output or input. A process adapter says false and closes on the
     * process's exit instead, with its exit status (its pipes close first, in either order).
     */
    closeOnEof = true
  ) {
    this.subscriptions = [
      // The shared Content-Length reader types frames as JSON-RPC; a DAP adapter sends DAP messages in the same frames.
      reader.listen((m) => this.onMessage(m as unknown as DebugProtocol.ProtocolMessage)),
      reader.onClose(() => closeOnEof && this.close(new Error(`the ${name} adapter closed its output`))),
      reader.onError((e) =>
        this.close(
          new Error(
            e instanceof FramingError && e.code === 'over-budget'
              ? `${e.message}. Cellmate stopped the adapter and ended the session; debug launch starts a new one (print less at once: smaller outputs, fewer variables)`
              : `unreadable output from the ${name} adapter: ${e.message}`
          )
        )
      ),
      writer.onClose(() => closeOnEof && this.close(new Error(`the ${name} adapter closed its input`)))
    ];
  }

  request<K extends DapCommand>(
    command: K,
    args: DapRequests[K],
    opts: { timeoutMs?: number } = {}
  ): Promise<DapResponses[K]> {
    if (this.closedWith)
      return Promise.reject(new DapRequestError(command, `${command}: ${this.closedWith.message}`, 'closed'));
    const seq = this.seq++;
    const msg: DebugProtocol.Request = {
      seq,
      type: 'request',
      command,
      ...(args !== undefined ? { arguments: args } : {})
    };
    return new Promise<DapResponses[K]>((resolve, reject) => {
      const p: Pending = { command, resolve: resolve as (b: unknown) => void, reject };
      const ms = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
      if (ms > 0)
        p.timer = setTimeout(() => {
          this.pending.delete(seq);
          reject(
            new DapRequestError(
              command,
              `${command}: the ${this.name} adapter did not answer within ${Math.round(ms / 1000)} s`,
              'timeout'
            )
          );
        }, ms);
      this.pending.set(seq, p);
      // The shared Content-Length writer is typed for JSON-RPC; DAP frames the same bytes with its own message shape.
      this.writer.write(msg as unknown as Message).catch((e: Error) => {
        this.settle(seq)?.reject(
          new DapRequestError(command, `${command}: cannot write to the ${this.name} adapter: ${e.message}`, 'closed', {
            cause: e
          })
        );
      });
    });
  }

  private settle(seq: number): Pending | undefined {
    const p = this.pending.get(seq);
    if (!p) return undefined;
    this.pending.delete(seq);
    clearTimeout(p.timer);
    return p;
  }

  private onMessage(m: DebugProtocol.ProtocolMessage): void {
    if (m.type === 'response') {
      const r = m as DebugProtocol.Response;
      const p = this.settle(r.request_seq);
      if (!p) return;
      if (r.success) p.resolve(r.body);
      else p.reject(new DapRequestError(r.command, `${r.command} failed in ${this.name}: ${errorText(r)}`));
    } else if (m.type === 'event') {
      this.events.fire(m as DebugProtocol.Event);
    } else if (m.type === 'request') {
      // Reverse requests (runInTerminal, startDebugging): we have no terminal or child sessions.
      const req = m as DebugProtocol.Request;
      const reply: DebugProtocol.Response = {
        seq: this.seq++,
        type: 'response',
        request_seq: req.seq,
        command: req.command,
        success: false,
        message: `Cellmate does not support ${req.command}`
      };
      // The shared Content-Length writer is typed for JSON-RPC; DAP frames the same bytes with its own message shape.
      void this.writer.write(reply as unknown as Message).catch(() => undefined);
    }
  }

  /** Fails every pending request and fires `onClose` once. */
  close(reason: Error): void {
    if (this.closedWith) return;
    this.closedWith = reason;
    for (const [seq, p] of [...this.pending]) {
      this.settle(seq);
      p.reject(new DapRequestError(p.command, `${p.command}: ${reason.message}`, 'closed', { cause: reason }));
    }
    this.closes.fire(reason);
  }

  dispose(): void {
    this.close(new Error(`the ${this.name} session was closed`));
    for (const s of this.subscriptions) s.dispose();
    this.events.dispose();
    this.closes.dispose();
  }
}

function errorText(r: DebugProtocol.Response): string {
  const body = r.body as { error?: DebugProtocol.Message } | undefined;
  const format = body?.error?.format;
  if (format) return format.replace(/\{(\w+)\}/g, (_, k: string) => body?.error?.variables?.[k] ?? `{${k}}`);
  return r.message ?? 'no reason given';
}
