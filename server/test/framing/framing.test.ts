/**
 * Content-Length framing (DBG-6, LSP-1; issue #10 items 1 and "framing fuzz"): a recorded
 * basedpyright session (fixtures/lsp-session.bin, its messages as vscode-jsonrpc itself
 * decoded them in fixtures/lsp-session.json) behind a banner, cut into 10,000 random
 * chunkings, decodes every message once and in order; corrupted frames each give one
 * FramingError of the right kind and every other frame still decodes; random garbage
 * always ends (close) — no hang.
 */
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamMessageReader, type Message } from 'vscode-jsonrpc/node.js';
import { describe, expect, it } from 'vitest';
import {
  createFramedReader,
  createFramedWriter,
  FramingError,
  type FramingErrorCode
} from '../../src/framing/index.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const SESSION = readFileSync(path.join(fixtures, 'lsp-session.bin'));
const EXPECTED = JSON.parse(readFileSync(path.join(fixtures, 'lsp-session.json'), 'utf8')) as Message[];
const BANNER = Buffer.from(
  'basedpyright-langserver: starting (pid 4242)\nWARNING: no virtualenv found, using /usr/bin/python3\r\n\n'
);

/** Deterministic PRNG (mulberry32) so a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts `bytes` at random points: many tiny pieces in some runs, few big ones in others. */
function chunk(bytes: Buffer, random: () => number): Buffer[] {
  const scale = [1, 3, 16, 200, 2000, 20_000][Math.floor(random() * 6)]!;
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length;) {
    const n = 1 + Math.floor(random() * scale);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

interface Decoded {
  messages: Message[];
  errors: Error[];
  logged: string[];
}

/**
 * Feeds `chunks` into a reader through a minimal synchronous stream (each chunk one
 * 'data' event, then 'end') and resolves on the reader's close — which must come, after
 * every message: a hang fails the test by its timeout.
 */
function decode(chunks: Buffer[], options: { stallTimeoutMs?: number; end?: boolean } = {}): Promise<Decoded> {
  const stream = new EventEmitter() as unknown as NodeJS.ReadableStream;
  const result: Decoded = { messages: [], errors: [], logged: [] };
  const reader = createFramedReader(stream, {
    log: (l) => result.logged.push(l),
    stallTimeoutMs: options.stallTimeoutMs
  });
  return new Promise((resolve) => {
    reader.onError((e) => result.errors.push(e));
    reader.onClose(() => resolve(result));
    reader.listen((m) => result.messages.push(m));
    for (const c of chunks) (stream as unknown as EventEmitter).emit('data', c);
    if (options.end !== false) (stream as unknown as EventEmitter).emit('end');
  });
}

function frame(body: string, header = `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`): Buffer {
  return Buffer.from(header + body, 'utf8');
}

describe('framing: the recorded session', () => {
  it('the fixture decodes with vscode-jsonrpc itself to the recorded messages (an independent check of the fixture)', async () => {
    const input = new PassThrough();
    const reader = new StreamMessageReader(input);
    const got: Message[] = [];
    const done = new Promise<void>((resolve) => reader.listen((m) => got.push(m) === EXPECTED.length && resolve()));
    input.end(SESSION);
    await done;
    expect(got).toEqual(EXPECTED);
    expect(EXPECTED.length).toBeGreaterThan(15);
  });

  it('10,000 random chunkings of banner + session: every message once, in order; the banner skipped and logged', async () => {
    const bytes = Buffer.concat([BANNER, SESSION]);
    for (let seed = 1; seed <= 10_000; seed++) {
      const got = await decode(chunk(bytes, rng(seed)));
      if (got.errors.length > 0 || got.messages.length !== EXPECTED.length) {
        throw new Error(
          `seed ${seed}: ${got.messages.length} messages, errors ${got.errors.map((e) => e.message).join('; ')}`
        );
      }
      expect(got.messages, `seed ${seed}`).toEqual(EXPECTED);
      expect(got.logged, `seed ${seed}`).toEqual([
        'skipped output that is not a frame (byte 0): basedpyright-langserver: starting (pid 4242)',
        'skipped output that is not a frame (byte 45): WARNING: no virtualenv found, using /usr/bin/python3'
      ]);
    }
  }, 300_000);

  it('a message split across two chunks, three messages in one chunk, a header split mid-line', async () => {
    const a = frame('{"jsonrpc":"2.0","id":1,"result":"ü"}');
    const b = frame('{"jsonrpc":"2.0","method":"m","params":{}}');
    const c = frame('{"jsonrpc":"2.0","id":2,"result":null}');
    const split = await decode([a.subarray(0, 30), a.subarray(30)]);
    expect(split.messages).toEqual([{ jsonrpc: '2.0', id: 1, result: 'ü' }]);
    const three = await decode([Buffer.concat([a, b, c])]);
    expect(three.messages.map((m) => (m as { id?: number }).id ?? 'n')).toEqual([1, 'n', 2]);
    const midHeader = await decode([a.subarray(0, 9), a.subarray(9, 17), a.subarray(17)]);
    expect(midHeader.messages).toHaveLength(1);
    expect([split, three, midHeader].every((d) => d.errors.length === 0)).toBe(true);
  });
});

/** A corruption of one frame and the error it must produce (null: it must decode). */
type Corruption = { kind: string; code: FramingErrorCode; make(body: string): Buffer };
const CORRUPTIONS: Corruption[] = [
  { kind: 'non-numeric length', code: 'bad-length', make: (b) => frame(b, 'Content-Length: 12a\r\n\r\n') },
  { kind: 'negative length', code: 'bad-length', make: (b) => frame(b, 'Content-Length: -5\r\n\r\n') },
  { kind: 'LF-only header', code: 'bad-header', make: (b) => frame(b, `Content-Length: ${Buffer.byteLength(b)}\n\n`) },
  {
    kind: 'no Content-Length',
    code: 'bad-header',
    make: (b) => frame(b, 'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n')
  },
  {
    kind: 'malformed second header line',
    code: 'bad-header',
    make: (b) => frame(b, `Content-Length: ${Buffer.byteLength(b)}\r\nnot a header\r\n\r\n`)
  },
  {
    kind: 'latin-1 charset',
    code: 'bad-charset',
    make: (b) =>
      frame(b, `Content-Length: ${Buffer.byteLength(b)}\r\nContent-Type: application/json; charset=latin1\r\n\r\n`)
  },
  { kind: 'huge length', code: 'too-large', make: () => frame('{}', 'Content-Length: 999999999999\r\n\r\n') },
  { kind: 'non-JSON body', code: 'not-json', make: (b) => frame(`${b.slice(0, -1)}`) },
  { kind: 'JSON array body', code: 'not-object', make: (b) => frame(`[${b}]`) },
  {
    kind: 'too short a length',
    code: 'not-json',
    make: (b) => frame(b, `Content-Length: ${Math.floor(Buffer.byteLength(b) / 2)}\r\n\r\n`)
  }
];

describe('framing: garbage', () => {
  it('2,000 sessions with random frames corrupted: one FramingError of the right kind per corrupted frame, every other message in order', async () => {
    const bodies = EXPECTED.map((m) => JSON.stringify(m));
    for (let seed = 1; seed <= 2_000; seed++) {
      const random = rng(seed);
      const parts: Buffer[] = [];
      const want: Message[] = [];
      const codes: FramingErrorCode[] = [];
      bodies.forEach((body, i) => {
        if (random() < 0.25) {
          const c = CORRUPTIONS[Math.floor(random() * CORRUPTIONS.length)]!;
          parts.push(c.make(body));
          codes.push(c.code);
        } else {
          parts.push(frame(body));
          want.push(EXPECTED[i]!);
        }
        if (random() < 0.1) parts.push(Buffer.from('[info] a log line on stdout\n'));
      });
      // After each corruption the scanner resynchronises at the next header.
      const got = await decode(chunk(Buffer.concat(parts), random));
      expect(got.messages, `seed ${seed}`).toEqual(want);
      expect(
        got.errors.map((e) => (e as FramingError).code),
        `seed ${seed}`
      ).toEqual(codes);
      expect(got.errors.every((e) => e instanceof FramingError && e.message.length > 20)).toBe(true);
    }
  }, 300_000);

  it('2,000 random byte mutations of the session always end: close comes, every error is a FramingError', async () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const random = rng(seed);
      const bytes = Buffer.from(Buffer.concat([BANNER, SESSION]));
      for (let k = 0; k < 1 + random() * 8; k++)
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      const got = await decode(chunk(bytes, random));
      expect(
        got.errors.every((e) => e instanceof FramingError),
        `seed ${seed}`
      ).toBe(true);
      expect(got.messages.length).toBeLessThanOrEqual(EXPECTED.length);
    }
  }, 300_000);

  it('random bytes only: nothing decoded, the bytes are logged as skipped output, and the reader closes', async () => {
    const random = rng(7);
    const bytes = Buffer.from(Array.from({ length: 50_000 }, () => Math.floor(random() * 256)));
    const got = await decode(chunk(bytes, random));
    expect(got.messages).toEqual([]);
    expect(got.logged.length).toBeGreaterThan(10);
  });

  it('a frame cut off by the end of the stream is a "truncated" error, after the messages before it', async () => {
    const a = frame('{"jsonrpc":"2.0","id":1,"result":1}');
    const got = await decode([a, frame('{"jsonrpc":"2.0","id":2,"result":2}').subarray(0, 30)]);
    expect(got.messages).toHaveLength(1);
    expect(got.errors.map((e) => (e as FramingError).code)).toEqual(['truncated']);
    expect(got.errors[0]!.message).toMatch(/ended inside the frame at byte 57: 8 of 35 body bytes/);
  });

  it('too long a length, then silence: "stalled" after the quiet period, and the frame inside the abandoned body still decodes', async () => {
    const next = frame('{"jsonrpc":"2.0","id":7,"result":"found"}');
    const input = Buffer.concat([frame('{"jsonrpc":"2.0","id":6,"result":"x"}', 'Content-Length: 400\r\n\r\n'), next]);
    const stream = new EventEmitter();
    const reader = createFramedReader(stream as unknown as NodeJS.ReadableStream, { stallTimeoutMs: 50 });
    const errors: FramingError[] = [];
    const got = new Promise<Message>((resolve) => reader.listen(resolve));
    reader.onError((e) => errors.push(e as FramingError));
    stream.emit('data', input);
    expect(await got).toEqual({ jsonrpc: '2.0', id: 7, result: 'found' });
    expect(errors.map((e) => e.code)).toEqual(['stalled']);
    expect(errors[0]!.message).toMatch(/declared 400 bytes but only \d+ arrived, then nothing for 50 ms/);
    reader.dispose();
  });
});

describe('framing: the writer', () => {
  it('writes frames our reader (and byte lengths, not characters) decode back, multibyte text included', async () => {
    const pipe = new PassThrough();
    const writer = createFramedWriter(pipe);
    const reader = createFramedReader(pipe);
    const sent = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { text: 'naïve — 日本語 🐍' } },
      { seq: 1, type: 'request', command: 'initialize', arguments: { adapterID: 'debugpy' } }
    ];
    const got: unknown[] = [];
    const done = new Promise<void>((resolve) => reader.listen((m) => got.push(m) === sent.length && resolve()));
    for (const m of sent) await writer.write(m as Message);
    await done;
    expect(got).toEqual(sent);
    writer.dispose();
    reader.dispose();
  });

  it('hands each message to the stream as one write, at once and in call order (issue #9: no wait between messages)', async () => {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, callback) {
        chunks.push(chunk);
        setTimeout(callback, 5);
      }
    });
    const writer = createFramedWriter(sink);
    const messages = Array.from({ length: 20 }, (_, i) => ({
      jsonrpc: '2.0',
      method: 'chat/event',
      params: { i, text: 'é'.repeat(i) }
    }));
    const pending = messages.map((m) => writer.write(m as Message));
    // Every message reached the stream synchronously, before any write's callback ran: the
    // first is being written, the rest are buffered in the stream, none waits in the writer.
    const frameBytes = (m: unknown) => {
      const n = Buffer.byteLength(JSON.stringify(m));
      return n + `Content-Length: ${n}\r\n\r\n`.length;
    };
    const total = messages.reduce((sum, m) => sum + frameBytes(m), 0);
    expect(chunks).toHaveLength(1);
    expect(sink.writableLength).toBe(total); // counts the chunk being written too
    await Promise.all(pending);
    expect(chunks).toHaveLength(messages.length);
    chunks.forEach((chunk, i) => {
      const body = JSON.stringify(messages[i]);
      expect(chunk.toString('utf8')).toBe(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    writer.dispose();
  });

  it('a failed write rejects and is reported on onError', async () => {
    const sink = new Writable({
      write(_chunk, _enc, callback) {
        callback(new Error('EPIPE: the other end is gone'));
      }
    });
    sink.on('error', () => {}); // the stream re-emits it; the writer's own listener reports it
    const writer = createFramedWriter(sink);
    const errors: Error[] = [];
    writer.onError(([error]) => errors.push(error));
    await expect(writer.write({ jsonrpc: '2.0', method: 'x' } as Message)).rejects.toThrow(/EPIPE/);
    expect(errors.some((e) => /EPIPE/.test(e.message))).toBe(true);
    writer.dispose();
  });
});
