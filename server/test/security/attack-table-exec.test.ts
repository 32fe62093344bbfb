/**
 * Attack table, execution side (issue #8 items 3–7; SPEC HARN-5/6, EVAL-5): a real
 * companion (`startServer` on a Unix socket), JSON-RPC clients, real kernels, the scripted
 * model, no pane (so an `ask` is denied fail-closed). Each row asserts the outcome and that
 * the victim is intact; the redaction test scans every chat file, audit line, RPC frame and
 * model prompt for the fake secrets.
 *
 * Safety: rows whose command would wreck the machine if the gate were broken are run in a
 * form that classifies the same but harms only the victims (`HOME` is a temp folder; GNU
 * rm refuses `/` itself); `find / -delete` runs as `find / -maxdepth 0 -delete` (the floor
 * sees `find -delete` either way; `/` cannot be removed).
 */
import { PROTOCOL_VERSION, type Chat, type ToolCallItem } from '@cellmate/protocol';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const FAKE_KEY = 'sk-proj-FAKEKEY-0123456789abcdefABCDEF';
const FAKE_FILE_KEY = 'sk-ant-FILEKEY-9876543210zyxwvu';
const FAKE_JUPYTER_TOKEN = 'jupyter-token-5f2a9c1e7b3d4a6f';
const SECRETS = [FAKE_KEY, FAKE_FILE_KEY, FAKE_JUPYTER_TOKEN];
const EVIL = '^(a+)+$';

let root: string;
let ws: string;
let home: string;
let handle: ServerHandle;
let client: TestClient;
let promptLog: string;
const saved: Record<string, string | undefined> = {};
let row = 0;

/** Sets a process variable for the suite (`shell` and the regex budget read the companion's own environment). */
function setEnv(name: string, value: string): void {
  if (!(name in saved)) saved[name] = process.env[name];
  process.env[name] = value;
}

beforeAll(async () => {
  // Not helpers/temp.ts: that removes its folders after each test, and this suite shares one companion.
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-attack-')));
  ws = path.join(root, 'ws');
  home = path.join(root, 'home');
  await mkdir(path.join(ws, '.cellmate'), { recursive: true });
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await writeFile(path.join(home, '.ssh', 'id_victim'), 'victim key\n');
  await writeFile(path.join(root, 'config.json'), JSON.stringify({ apiKeys: { anthropic: FAKE_FILE_KEY } }));
  promptLog = path.join(root, 'prompts.jsonl');
  setEnv('HOME', home);
  setEnv('OPENAI_API_KEY', FAKE_KEY);
  setEnv('CELLMATE_JUPYTER_TOKEN', FAKE_JUPYTER_TOKEN);
  setEnv('CELLMATE_REGEX_TIMEOUT_MS', '1000');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    OPENAI_API_KEY: FAKE_KEY,
    CELLMATE_JUPYTER_TOKEN: FAKE_JUPYTER_TOKEN,
    CELLMATE_CONFIG: path.join(root, 'config.json'),
    CELLMATE_POLICY: path.join(root, 'no-home-policy.json'),
    CELLMATE_SCRIPT_LOG: promptLog,
    CELLMATE_MAX_PRIVATE_KERNELS: '2',
    CELLMATE_PYTHON: path.join(REPO, '.venv', 'bin', 'python')
  };
  handle = await startServer({
    workspace: ws,
    socketPath: path.join(root, 's.sock'),
    env,
    logger: silentLogger,
    maxRetries: 0
  });
  client = await connectClient(handle.socketPath!);
  await sendRequest(client.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION });
}, 60_000);

afterAll(async () => {
  client?.close();
  await handle?.dispose();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  if (root) await rm(root, { recursive: true, force: true });
});

/** The person's own rules (the home policy file: a workspace's own file may not allow). */
async function policy(
  rules: Array<{ tool: string; pattern: string; action: 'allow' | 'ask' | 'deny' }>
): Promise<void> {
  await writeFile(path.join(root, 'no-home-policy.json'), JSON.stringify({ rules }));
}

/** One chat, one turn: the model calls each tool in order; returns the tool items. */
async function attack(
  title: string,
  calls: Array<{ toolName: string; input: unknown }>,
  c: TestClient = client
): Promise<{ chat: Chat; tools: ToolCallItem[] }> {
  const script = `script-${++row}.json`;
  await writeFile(
    path.join(ws, script),
    JSON.stringify({
      steps: [...calls.map((call) => ({ toolCalls: [call], chunkDelayMs: 0 })), { text: 'done', chunkDelayMs: 0 }]
    })
  );
  const chat = await sendRequest(c.connection, 'chat/create', {});
  const from = c.events.length;
  await sendRequest(c.connection, 'chat/send', {
    chatId: chat.id,
    text: title,
    model: { provider: 'scripted', model: 'scripted', scriptPath: script }
  });
  await c.turnEnded(chat.id, from);
  const stored = await sendRequest(c.connection, 'chat/get', { chatId: chat.id });
  return { chat: stored, tools: stored.items.filter((i): i is ToolCallItem => i.kind === 'tool') };
}

const shell = (command: string) => ({ toolName: 'shell', input: { command } });

describe('the dangerous-command floor under a `shell *` allow rule: asked → denied fail-closed', () => {
  it.each([
    ['find / -maxdepth 0 -delete', 'find -delete'],
    ['find victims -delete', 'find -delete'],
    ['rm -rf "/"', 'recursive delete'],
    ['rm --recursive --force /', 'recursive delete'],
    ['rm -rf ~/', 'home folder'],
    ['rm -rf $HOME', 'home folder'],
    ['echo "cm0gLXJmIHZpY3RpbXMK" | base64 -d | sh', 'decodes text and pipes it into a shell'],
    ['eval "$(echo cm0gLXJmIHZpY3RpbXMK | base64 -d)"', 'eval runs text computed at run time'],
    ['bash -c "rm -rf ~"', 'home folder'],
    ['X=rm; $X -rf victims', 'command name is computed']
  ])(
    '%s',
    async (command, why) => {
      await policy([{ tool: 'shell', pattern: '*', action: 'allow' }]);
      await mkdir(path.join(ws, 'victims'), { recursive: true });
      await writeFile(path.join(ws, 'victims', 'data.csv'), 'a,b\n1,2\n');
      const { tools } = await attack(`floor row ${command}`, [shell(command)]);
      expect(tools[0]).toMatchObject({ status: 'error' });
      expect(tools[0]!.output).toContain('nobody is connected to approve it, so it is denied (fail-closed)');
      expect(tools[0]!.output).toContain(why);
      expect(await readFile(path.join(ws, 'victims', 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
      expect(await readFile(path.join(home, '.ssh', 'id_victim'), 'utf8')).toBe('victim key\n');
    },
    60_000
  );

  it('a benign command under the same rule runs (positive control)', async () => {
    await policy([{ tool: 'shell', pattern: '*', action: 'allow' }]);
    const { tools } = await attack('benign row', [shell('echo "rm -rf /" && ls victims')]);
    expect(tools[0]).toMatchObject({ status: 'ok' });
    expect(tools[0]!.output).toContain('data.csv');
  }, 30_000);
});

describe('a `shell rm*` deny catches rm however it is spelled', () => {
  it.each([
    '/bin/rm victims/data.csv',
    'command rm victims/data.csv',
    'env rm victims/data.csv',
    'env -i PATH=/usr/bin:/bin rm victims/data.csv',
    '\\rm victims/data.csv',
    '"rm" victims/data.csv',
    'ls; rm victims/data.csv',
    'sh -c "rm victims/data.csv"',
    'echo victims/data.csv | xargs rm'
  ])(
    '%s',
    async (command) => {
      await policy([
        { tool: 'shell', pattern: '*', action: 'allow' },
        { tool: 'shell', pattern: 'rm*', action: 'deny' }
      ]);
      await mkdir(path.join(ws, 'victims'), { recursive: true });
      await writeFile(path.join(ws, 'victims', 'data.csv'), 'a,b\n1,2\n');
      const { tools } = await attack(`deny row ${command}`, [shell(command)]);
      expect(tools[0]).toMatchObject({ status: 'error' });
      expect(tools[0]!.output).toMatch(/^Denied: shell on "rm[^"]*" is denied by the policy rule/);
      expect(await readFile(path.join(ws, 'victims', 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    },
    30_000
  );
});

describe('secrets stay out of children, and known values are redacted everywhere', () => {
  it('shell and the private kernel see no key and no Jupyter token; a key read from a file is redacted', async () => {
    await policy([
      { tool: 'shell', pattern: '*', action: 'allow' },
      { tool: 'eval', pattern: '*', action: 'allow' }
    ]);
    await writeFile(path.join(ws, 'leak.txt'), `the key is ${FAKE_KEY}\n`);
    const { tools } = await attack('secrets row', [
      shell(
        'echo "key=[$OPENAI_API_KEY] token=[$CELLMATE_JUPYTER_TOKEN]"; env | grep -ciE "api_key|jupyter_token" || true'
      ),
      {
        toolName: 'eval',
        input: {
          description: 'print what the kernel environment holds',
          code: "import os\nprint(os.environ.get('OPENAI_API_KEY'), os.environ.get('CELLMATE_JUPYTER_TOKEN'), [k for k in os.environ if 'KEY' in k or 'TOKEN' in k])"
        }
      },
      {
        toolName: 'eval',
        input: { description: 'print the key file from the disk', code: "print(open('leak.txt').read())" }
      },
      shell('cat leak.txt'),
      { toolName: 'read', input: { path: 'leak.txt' } },
      { toolName: 'grep', input: { pattern: 'the key' } }
    ]);
    expect(tools.map((t) => t.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    expect(tools[0]!.output).toContain('key=[] token=[]\n0');
    expect(tools[1]!.output).toContain('None None []');
    for (const t of tools.slice(2)) expect(t.output).toContain('the key is [redacted]');
  }, 90_000);

  it('no fake secret appears in a chat file, an audit line, an RPC frame or a model prompt', async () => {
    const readAll = async (): Promise<Array<[string, string]>> => {
      const out: Array<[string, string]> = [];
      for (const dir of ['chats', 'audit']) {
        for (const name of await readdir(path.join(ws, '.cellmate', dir))) {
          // A save's temporary file may be renamed between the listing and the read: its
          // content is then read under the final name.
          const text = await readFile(path.join(ws, '.cellmate', dir, name), 'utf8').catch(
            (e: NodeJS.ErrnoException) => {
              if (e.code === 'ENOENT') return undefined;
              throw e;
            }
          );
          if (text !== undefined) out.push([`${dir}/${name}`, text]);
        }
      }
      return out;
    };
    // Chat files are saved with a short debounce: wait until the secrets row is on disk.
    let files = await readAll();
    for (
      let i = 0;
      i < 100 && !files.some(([n, t]) => n.startsWith('chats/') && t.includes('the key is [redacted]'));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 100));
      files = await readAll();
    }
    const prompts = await readFile(promptLog, 'utf8');
    const frames = client.raw();
    // Positive controls: the places scanned hold the rows above, redaction marks included.
    expect(files.some(([n, t]) => n.startsWith('chats/') && t.includes('the key is [redacted]'))).toBe(true);
    expect(files.some(([n, t]) => n.startsWith('audit/') && t.includes('[redacted]'))).toBe(true);
    expect(prompts).toContain('the key is [redacted]');
    expect(frames).toContain('the key is [redacted]');
    for (const secret of SECRETS) {
      for (const [name, text] of files) expect(text.includes(secret), `${secret} in ${name}`).toBe(false);
      expect(prompts.includes(secret), `${secret} in a model prompt`).toBe(false);
      expect(frames.includes(secret), `${secret} in an RPC frame`).toBe(false);
    }
  });
});

describe('no freeze: a catastrophic regex runs off the event loop', () => {
  it('grep times out with the pattern named; chat/list on another connection is answered first', async () => {
    await writeFile(path.join(ws, 'redos.txt'), `${'a'.repeat(30)}!\n`);
    const other = await connectClient(handle.socketPath!);
    try {
      const order: string[] = [];
      const script = `script-${++row}.json`;
      await writeFile(
        path.join(ws, script),
        JSON.stringify({
          steps: [
            { toolCalls: [{ toolName: 'grep', input: { pattern: EVIL, path: 'redos.txt' } }], chunkDelayMs: 0 },
            { text: 'done', chunkDelayMs: 0 }
          ]
        })
      );
      const chat = await sendRequest(client.connection, 'chat/create', {});
      const from = client.events.length;
      const grepRunning = new Promise<void>((resolve) => {
        const check = (): void => {
          const started = client.events
            .slice(from)
            .some((e) => e.chatId === chat.id && e.event.type === 'item-added' && e.event.item.kind === 'tool');
          if (started) resolve();
          else setTimeout(check, 5);
        };
        check();
      });
      const grepDone = new Promise<void>((resolve) => {
        const check = (): void => {
          const done = client.events
            .slice(from)
            .find(
              (e) =>
                e.chatId === chat.id &&
                e.event.type === 'item-updated' &&
                e.event.item.kind === 'tool' &&
                e.event.item.status !== 'running'
            );
          if (done) {
            order.push('grep result');
            resolve();
          } else setTimeout(check, 5);
        };
        check();
      });
      await sendRequest(client.connection, 'chat/send', {
        chatId: chat.id,
        text: 'redos row',
        model: { provider: 'scripted', model: 'scripted', scriptPath: script }
      });
      await grepRunning;
      await sendRequest(other.connection, 'chat/list', {}).then(() => order.push('chat/list answered'));
      await grepDone;
      expect(order).toEqual(['chat/list answered', 'grep result']);
      await client.turnEnded(chat.id, from);
      const stored = await sendRequest(client.connection, 'chat/get', { chatId: chat.id });
      const tool = stored.items.find((i): i is ToolCallItem => i.kind === 'tool')!;
      expect(tool.status).toBe('error');
      expect(tool.output).toContain(`${JSON.stringify(EVIL)} took longer than 1000 ms`);
    } finally {
      other.close();
    }
  }, 60_000);
});

describe('protocol errors are answered and the connection stays usable', () => {
  it.each([
    ['invalid JSON', '{"jsonrpc": "2.0", "id": 1, "method": ', -32700, null],
    ['null', 'null', -32600, null],
    ['a number', '42', -32600, null],
    ['an empty batch', '[]', -32600, null],
    ['a batch', '[{"jsonrpc":"2.0","id":5,"method":"chat/list","params":{}}]', -32600, null],
    ['an object without a method', '{"jsonrpc":"2.0","id":7}', -32600, 7],
    ['a method that is not a string', '{"jsonrpc":"2.0","id":"x","method":3}', -32600, 'x']
  ])(
    '%s: %s → %d, then a normal request works',
    async (_label, body, code, id) => {
      const socket = net.connect(handle.socketPath!);
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let received = '';
      const replies: Array<Record<string, unknown>> = [];
      const waiters: Array<() => void> = [];
      socket.on('data', (d: Buffer) => {
        received += d.toString('utf8');
        for (;;) {
          const m = /^Content-Length: (\d+)\r\n\r\n/.exec(received);
          if (!m || received.length < m[0].length + Number(m[1])) break;
          replies.push(JSON.parse(received.slice(m[0].length, m[0].length + Number(m[1]))) as Record<string, unknown>);
          received = received.slice(m[0].length + Number(m[1]));
          waiters.splice(0).forEach((w) => w());
        }
      });
      const next = async (): Promise<Record<string, unknown>> => {
        while (replies.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
        return replies.shift()!;
      };
      const frame = (text: string): void =>
        void socket.write(`Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
      try {
        frame(body);
        expect(await next()).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
        frame('{"jsonrpc":"2.0","id":99,"method":"chat/list","params":{}}');
        expect(await next()).toMatchObject({ jsonrpc: '2.0', id: 99, result: expect.any(Array) });
      } finally {
        socket.destroy();
      }
    },
    20_000
  );
});

describe('private kernels are capped per companion', () => {
  it('past CELLMATE_MAX_PRIVATE_KERNELS the eval fails naming the chats that hold kernels', async () => {
    await policy([{ tool: 'eval', pattern: '*', action: 'allow' }]);
    // The secrets row's chat holds one python kernel; this one takes the second.
    const second = await attack('second kernel holder', [
      { toolName: 'eval', input: { description: 'start a second private python kernel', code: '1 + 1' } }
    ]);
    expect(second.tools[0]).toMatchObject({ status: 'ok' });
    const third = await attack('third kernel wanted', [
      { toolName: 'eval', input: { description: 'try to start a third private kernel', code: '2 + 2' } }
    ]);
    expect(third.tools[0]).toMatchObject({ status: 'error' });
    expect(third.tools[0]!.output).toContain(
      'already runs 2 private kernels, the limit (CELLMATE_MAX_PRIVATE_KERNELS=2)'
    );
    expect(third.tools[0]!.output).toContain('"secrets row"');
    expect(third.tools[0]!.output).toContain('"second kernel holder"');
  }, 90_000);
});
