/**
 * The ZMQ wire format of Jupyter messages (messaging spec, "The Wire Protocol"):
 *
 *   [identities…, '<IDS|MSG>', hmac, header, parent_header, metadata, content, buffers…]
 *
 * `hmac` is the hex HMAC-SHA256, keyed by the connection key, over the four JSON frames
 * in order; an empty key means no signing (empty signature frame, nothing checked).
 * Pure: no sockets. Errors are `KernelBridgeError` with `bad_signature` or
 * `malformed_message`, never a crash on hostile input.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { KernelBridgeError } from '../common/errors.js';
import type { AnyMessage, Message, MsgType } from './messages.js';

export const DELIMITER = '<IDS|MSG>';
const DELIMITER_BUF = Buffer.from(DELIMITER);

/** Frames as they come off a zeromq socket. */
export type Frames = readonly (Buffer | Uint8Array | string)[];

function toBuffer(f: Buffer | Uint8Array | string): Buffer {
  if (typeof f === 'string') return Buffer.from(f, 'utf8');
  return Buffer.isBuffer(f) ? f : Buffer.from(f.buffer, f.byteOffset, f.byteLength);
}

/** Hex HMAC-SHA256 over the four JSON frames; '' when `key` is empty. */
export function sign(key: string | Buffer, jsonFrames: readonly Buffer[]): string {
  if (key.length === 0) return '';
  const h = createHmac('sha256', key);
  for (const f of jsonFrames) h.update(f);
  return h.digest('hex');
}

/** Encodes a message for a zmq socket. Identities come first when present. */
export function serialize(msg: Message<MsgType>, key: string | Buffer): Buffer[] {
  const json = [msg.header, msg.parent_header, msg.metadata, msg.content].map((o) =>
    Buffer.from(JSON.stringify(o), 'utf8')
  );
  return [...msg.identities, DELIMITER_BUF, Buffer.from(sign(key, json), 'ascii'), ...json, ...msg.buffers];
}

function malformed(message: string, cause?: unknown): KernelBridgeError {
  return new KernelBridgeError('malformed_message', message, cause === undefined ? undefined : { cause });
}

function parseObject(frame: Buffer, name: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(frame.toString('utf8'));
  } catch (e) {
    throw malformed(`${name} frame is not valid JSON`, e);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw malformed(`${name} frame is not a JSON object`);
  }
  return v as Record<string, unknown>;
}

/**
 * Decodes frames into a message, checking the signature in constant time.
 * The header must carry string `msg_id` and `msg_type`; content is not validated
 * beyond being an object (unknown message types pass through).
 */
export function deserialize(frames: Frames, key: string | Buffer): AnyMessage {
  const bufs = frames.map(toBuffer);
  const d = bufs.findIndex((b) => b.equals(DELIMITER_BUF));
  if (d < 0) throw malformed('missing <IDS|MSG> delimiter');
  if (bufs.length < d + 6) throw malformed(`expected 5 frames after the delimiter, got ${bufs.length - d - 1}`);
  const signature = bufs[d + 1]!;
  const json = bufs.slice(d + 2, d + 6);
  if (key.length > 0) {
    const expected = Buffer.from(sign(key, json), 'ascii');
    // Length check first: timingSafeEqual throws on unequal lengths; the length of a hex
    // SHA-256 digest is public, so this leaks nothing.
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
      throw new KernelBridgeError('bad_signature', 'message signature does not match');
    }
  }
  const header = parseObject(json[0]!, 'header');
  if (typeof header.msg_id !== 'string' || typeof header.msg_type !== 'string') {
    throw malformed('header lacks string msg_id / msg_type');
  }
  // The frame's shape is checked above; a message's content is trusted per msg_type (the kernel is the one speaking).
  return {
    identities: bufs.slice(0, d),
    header,
    parent_header: parseObject(json[1]!, 'parent_header'),
    metadata: parseObject(json[2]!, 'metadata'),
    content: parseObject(json[3]!, 'content'),
    buffers: bufs.slice(d + 6)
  } as unknown as AnyMessage;
}
