/**
 * Jupyter messaging protocol 5.3 message types, discriminated on `header.msg_type`.
 *
 * Written here rather than imported from `@jupyterlab/services`' `KernelMessage` so the
 * Node-side code (client and JS kernel) depends on no DOM-flavoured type and gets one
 * typed content map (`ContentMap`) to key requests and replies on. Names follow
 * JupyterLab's `messages.ts` (`isExecuteReplyMsg`, …).
 */
import { randomUUID } from 'node:crypto';

export type JSONPrimitive = string | number | boolean | null;
export type JSONValue = JSONPrimitive | JSONObject | JSONValue[];
export interface JSONObject {
  [key: string]: JSONValue | undefined;
}

export type Channel = 'shell' | 'control' | 'stdin' | 'iopub';

/** Protocol version this package speaks. */
export const PROTOCOL_VERSION = '5.3';

export interface Header<T extends string = MsgType> {
  msg_id: string;
  msg_type: T;
  username: string;
  session: string;
  date: string;
  version: string;
  subshell_id?: string | null;
}

/** A MIME bundle: `{ 'text/plain': '…', 'image/png': '<base64>' }`. */
export type MimeBundle = Record<string, JSONValue>;

export interface LanguageInfo {
  name: string;
  version: string;
  mimetype: string;
  file_extension: string;
  pygments_lexer?: string;
  codemirror_mode?: string | JSONObject;
  nbconvert_exporter?: string;
}

export interface ErrorContent {
  ename: string;
  evalue: string;
  traceback: string[];
}

export type ReplyStatus<Ok> =
  ({ status: 'ok' } & Ok) | ({ status: 'error' } & ErrorContent) | { status: 'abort' | 'aborted' };

/** Content of every message type, keyed by `msg_type`. */
export interface ContentMap {
  // shell
  execute_request: {
    code: string;
    silent: boolean;
    store_history: boolean;
    user_expressions: JSONObject;
    allow_stdin: boolean;
    stop_on_error: boolean;
  };
  execute_reply: ReplyStatus<{ payload?: JSONObject[]; user_expressions?: JSONObject }> & {
    execution_count: number | null;
  };
  kernel_info_request: Record<string, never>;
  kernel_info_reply: {
    status: 'ok';
    protocol_version: string;
    implementation: string;
    implementation_version: string;
    language_info: LanguageInfo;
    banner: string;
    debugger?: boolean;
    help_links?: { text: string; url: string }[];
  };
  complete_request: { code: string; cursor_pos: number };
  complete_reply: ReplyStatus<{
    matches: string[];
    cursor_start: number;
    cursor_end: number;
    metadata: JSONObject;
  }>;
  inspect_request: { code: string; cursor_pos: number; detail_level: 0 | 1 };
  inspect_reply: ReplyStatus<{ found: boolean; data: MimeBundle; metadata: JSONObject }>;
  is_complete_request: { code: string };
  is_complete_reply: {
    status: 'complete' | 'incomplete' | 'invalid' | 'unknown';
    indent?: string;
  };
  history_request: JSONObject;
  history_reply: JSONObject;
  comm_info_request: { target_name?: string };
  comm_info_reply: { status: 'ok'; comms: JSONObject };
  // control
  shutdown_request: { restart: boolean };
  shutdown_reply: { status: 'ok' | 'error'; restart: boolean };
  interrupt_request: Record<string, never>;
  interrupt_reply: ReplyStatus<object>;
  debug_request: JSONObject;
  debug_reply: JSONObject;
  // stdin
  input_request: { prompt: string; password: boolean };
  input_reply: { value: string };
  // iopub
  status: { execution_state: 'busy' | 'idle' | 'starting' | 'restarting' | 'dead' };
  stream: { name: 'stdout' | 'stderr'; text: string };
  execute_input: { code: string; execution_count: number };
  execute_result: { execution_count: number; data: MimeBundle; metadata: JSONObject };
  display_data: { data: MimeBundle; metadata: JSONObject; transient?: JSONObject };
  update_display_data: { data: MimeBundle; metadata: JSONObject; transient: JSONObject };
  clear_output: { wait: boolean };
  error: ErrorContent;
  debug_event: JSONObject;
  comm_open: JSONObject;
  comm_msg: JSONObject;
  comm_close: JSONObject;
}

export type MsgType = keyof ContentMap;

/** A decoded Jupyter message of one type. */
export interface Message<T extends MsgType = MsgType> {
  header: Header<T>;
  /** `{}` for messages that answer nothing. */
  parent_header: Header | Record<string, never>;
  metadata: JSONObject;
  content: ContentMap[T];
  /** Binary buffers after the four JSON frames. */
  buffers: Buffer[];
  /** ZMQ routing prefix (ROUTER side) or topic (IOPub); empty when none. */
  identities: Buffer[];
  channel?: Channel;
}

/** Union of all message shapes: narrowing on `header.msg_type` narrows `content`. */
export type AnyMessage = { [K in MsgType]: Message<K> }[MsgType];

/** Which reply answers which request. */
export interface ReplyMap {
  execute_request: 'execute_reply';
  kernel_info_request: 'kernel_info_reply';
  complete_request: 'complete_reply';
  inspect_request: 'inspect_reply';
  is_complete_request: 'is_complete_reply';
  history_request: 'history_reply';
  comm_info_request: 'comm_info_reply';
  shutdown_request: 'shutdown_reply';
  interrupt_request: 'interrupt_reply';
  debug_request: 'debug_reply';
}
export type RequestType = keyof ReplyMap;

/** Generic guard: `isMsgType(msg, 'stream')` narrows to `Message<'stream'>`. */
export function isMsgType<T extends MsgType>(msg: { header: { msg_type: string } }, type: T): msg is Message<T> {
  return msg.header.msg_type === type;
}

const guard =
  <T extends MsgType>(type: T) =>
  (msg: { header: { msg_type: string } }): msg is Message<T> =>
    msg.header.msg_type === type;

export const isExecuteRequestMsg = guard('execute_request');
export const isExecuteReplyMsg = guard('execute_reply');
export const isKernelInfoReplyMsg = guard('kernel_info_reply');
export const isCompleteReplyMsg = guard('complete_reply');
export const isInspectReplyMsg = guard('inspect_reply');
export const isIsCompleteReplyMsg = guard('is_complete_reply');
export const isShutdownReplyMsg = guard('shutdown_reply');
export const isInterruptReplyMsg = guard('interrupt_reply');
export const isInputRequestMsg = guard('input_request');
export const isInputReplyMsg = guard('input_reply');
export const isStatusMsg = guard('status');
export const isStreamMsg = guard('stream');
export const isExecuteInputMsg = guard('execute_input');
export const isExecuteResultMsg = guard('execute_result');
export const isDisplayDataMsg = guard('display_data');
export const isUpdateDisplayDataMsg = guard('update_display_data');
export const isClearOutputMsg = guard('clear_output');
export const isErrorMsg = guard('error');

/** Builds a message with a fresh header. `parent` is the request it answers, if any. */
export function createMessage<T extends MsgType>(opts: {
  msgType: T;
  content: ContentMap[T];
  session: string;
  username?: string;
  parent?: Header;
  metadata?: JSONObject;
  buffers?: Buffer[];
  identities?: Buffer[];
  channel?: Channel;
  msgId?: string;
}): Message<T> {
  return {
    header: {
      msg_id: opts.msgId ?? randomUUID(),
      msg_type: opts.msgType,
      username: opts.username ?? 'cellmate',
      session: opts.session,
      date: new Date().toISOString(),
      version: PROTOCOL_VERSION
    },
    parent_header: opts.parent ?? {},
    metadata: opts.metadata ?? {},
    content: opts.content,
    buffers: opts.buffers ?? [],
    identities: opts.identities ?? [],
    ...(opts.channel ? { channel: opts.channel } : {})
  };
}

/** The msg_id of the request a message answers, or undefined. */
export function parentMsgId(msg: { parent_header: Header | Record<string, never> }): string | undefined {
  const id = (msg.parent_header as Partial<Header>).msg_id;
  return typeof id === 'string' ? id : undefined;
}
