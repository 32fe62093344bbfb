import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isKernelBridgeError, KernelBridgeError } from '../../src/common/errors.js';
import {
  createMessage,
  isExecuteReplyMsg,
  isMsgType,
  isStreamMsg,
  parentMsgId,
  type AnyMessage
} from '../../src/messaging/messages.js';
import { DELIMITER, deserialize, serialize } from '../../src/messaging/wire.js';

const KEY = 'a0b1c2d3-secret';

function sample() {
  const parent = createMessage({
    msgType: 'execute_request',
    session: 's1',
    content: {
      code: 'x = 1',
      silent: false,
      store_history: true,
      user_expressions: {},
      allow_stdin: false,
      stop_on_error: true
    }
  }).header;
  return createMessage({
    msgType: 'stream',
    session: 's2',
    parent,
    content: { name: 'stdout', text: 'héllo ✓\n' },
    metadata: { cellmate: { tag: 1 } },
    buffers: [Buffer.from([0, 1, 2, 255])],
    identities: [Buffer.from('peer-1'), Buffer.from('peer-2')]
  });
}

function expectCode(fn: () => unknown, code: KernelBridgeError['code']): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(isKernelBridgeError(caught, code), `expected ${code}, got ${String(caught)}`).toBe(true);
}

describe('serialize / deserialize', () => {
  it('round-trips header, parent, metadata, content, buffers and identities', () => {
    const msg = sample();
    const frames = serialize(msg, KEY);
    expect(frames[2]!.toString()).toBe(DELIMITER);
    const back = deserialize(frames, KEY);
    expect(back.header).toEqual(msg.header);
    expect(back.parent_header).toEqual(msg.parent_header);
    expect(back.metadata).toEqual(msg.metadata);
    expect(back.content).toEqual(msg.content);
    expect(back.buffers.map((b) => [...b])).toEqual([[0, 1, 2, 255]]);
    expect(back.identities.map(String)).toEqual(['peer-1', 'peer-2']);
    expect(parentMsgId(back)).toBe((msg.parent_header as { msg_id: string }).msg_id);
  });

  it('signs with hex HMAC-SHA256 over the four JSON frames in order', () => {
    const frames = serialize(sample(), KEY);
    const h = createHmac('sha256', KEY);
    for (const f of frames.slice(4, 8)) h.update(f);
    expect(frames[3]!.toString()).toBe(h.digest('hex'));
  });

  it('with an empty key sends an empty signature and checks nothing', () => {
    const frames = serialize(sample(), '');
    expect(frames[3]!.length).toBe(0);
    frames[3] = Buffer.from('anything');
    expect(deserialize(frames, '').header.msg_type).toBe('stream');
  });

  it('rejects a tampered signature, a tampered content frame and a wrong key', () => {
    const frames = serialize(sample(), KEY);
    const badSig = [...frames];
    const sig = Buffer.from(badSig[3]!);
    sig[0] = sig[0] === 0x61 ? 0x62 : 0x61;
    badSig[3] = sig;
    expectCode(() => deserialize(badSig, KEY), 'bad_signature');

    const badContent = [...frames];
    badContent[7] = Buffer.from(JSON.stringify({ name: 'stdout', text: 'evil' }));
    expectCode(() => deserialize(badContent, KEY), 'bad_signature');

    expectCode(() => deserialize(frames, 'other-key'), 'bad_signature');
    const shortSig = [...frames];
    shortSig[3] = Buffer.from('abc');
    expectCode(() => deserialize(shortSig, KEY), 'bad_signature');
    const noSig = [...frames];
    noSig[3] = Buffer.alloc(0);
    expectCode(() => deserialize(noSig, KEY), 'bad_signature');
  });

  it('rejects malformed frames with malformed_message', () => {
    const frames = serialize(sample(), '');
    expectCode(
      () =>
        deserialize(
          frames.filter((f) => f.toString() !== DELIMITER),
          ''
        ),
      'malformed_message'
    );
    expectCode(() => deserialize(frames.slice(0, 6), ''), 'malformed_message');
    const badJson = [...frames];
    badJson[4] = Buffer.from('{not json');
    expectCode(() => deserialize(badJson, ''), 'malformed_message');
    const arrayHeader = [...frames];
    arrayHeader[4] = Buffer.from('[1,2]');
    expectCode(() => deserialize(arrayHeader, ''), 'malformed_message');
    const noType = [...frames];
    noType[4] = Buffer.from(JSON.stringify({ msg_id: 'x' }));
    expectCode(() => deserialize(noType, ''), 'malformed_message');
    const nullContent = [...frames];
    nullContent[7] = Buffer.from('null');
    expectCode(() => deserialize(nullContent, ''), 'malformed_message');
  });

  it('never throws anything but a KernelBridgeError on random frames', () => {
    for (let i = 0; i < 500; i++) {
      const n = i % 9;
      const frames = Array.from({ length: n }, (_, j) => (j === i % 4 ? Buffer.from(DELIMITER) : randomBytes(i % 40)));
      try {
        deserialize(frames, i % 2 ? KEY : '');
      } catch (e) {
        expect(e).toBeInstanceOf(KernelBridgeError);
      }
    }
  });

  it('accepts string and Uint8Array frames', () => {
    const frames: (Buffer | Uint8Array | string)[] = serialize(sample(), KEY).map((f, i) =>
      i % 2 ? new Uint8Array(f) : f
    );
    frames[2] = DELIMITER;
    expect(deserialize(frames, KEY).header.msg_type).toBe('stream');
  });
});

describe('message guards', () => {
  it('narrow on header.msg_type', () => {
    const msg: AnyMessage = sample();
    expect(isStreamMsg(msg)).toBe(true);
    expect(isExecuteReplyMsg(msg)).toBe(false);
    if (isMsgType(msg, 'stream')) {
      // Type-level check: content is the stream content here.
      const text: string = msg.content.text;
      expect(text).toContain('héllo');
    }
  });
});
