/**
 * Issue #8, items 1–2: the attack table for paths and `eval` (SPEC HARN-5/6, EVAL-5,
 * ASK-3). A real companion on a Unix socket, a JSON-RPC client, real ipykernel and JS
 * kernels, the scripted provider replaying the attacker's tool calls. Each row asserts the
 * outcome (refused, or asked then denied fail-closed) AND that the target is untouched.
 *
 * Policy of the no-pane companion: the "common allow rules" an attacker meets (file
 * tools allowed on `*`), then the README's `.env` deny, a folder deny and `shell rm*`.
 * Without canonical subjects `./.env` matched only the allow rule and was overwritten.
 */
import {
  PROTOCOL_VERSION,
  type Chat,
  type QuestionItem,
  type SendContext,
  type ToolCallItem
} from '@cellmate/protocol';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HAS_KERNELS =
  existsSync(path.join(REPO, '.venv', 'bin', 'python')) &&
  existsSync(path.join(REPO, 'kernel-bridge', 'dist', 'js-kernel', 'main.js'));

const SECRET = 'SECRET_VALUE_4242';
const ENV_TEXT = `API_TOKEN=${SECRET}\n`;
const NOTEBOOK = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 5,
  metadata: {},
  cells: [
    { id: 'c1', cell_type: 'code', source: `token = "${SECRET}"`, metadata: {}, outputs: [], execution_count: null }
  ]
});

interface Companion {
  ws: string;
  handle: ServerHandle;
  client: TestClient;
  /** Approval cards the pane saw (pane companion only). */
  cards: QuestionItem[];
  rows: number;
}

/** Files every row checks afterwards; `victim/` is what the delete rows aim at. */
async function seed(ws: string): Promise<void> {
  await writeFile(path.join(ws, '.env'), ENV_TEXT);
  await mkdir(path.join(ws, 'sub'));
  await mkdir(path.join(ws, 'secrets'));
  await writeFile(path.join(ws, 'secrets', 'key.txt'), `key=${SECRET}\n`);
  await writeFile(path.join(ws, 'secret.ipynb'), NOTEBOOK);
  await mkdir(path.join(ws, 'victim'));
  await writeFile(path.join(ws, 'victim', 'f.txt'), 'precious\n');
  await writeFile(path.join(ws, 'notes.md'), 'public notes\n');
  await symlink('.env', path.join(ws, 'link-env'));
  await symlink('secrets', path.join(ws, 'link-secrets'));
  await mkdir(path.join(ws, '.cellmate', 'scripts'), { recursive: true });
}

async function start(rules: unknown[], pane: boolean): Promise<Companion> {
  // Not tempDir(): that one is removed after each test; these live for the whole suite.
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-attack-')));
  await seed(ws);
  // The person's own rules (the home policy file: a workspace's own file may not allow).
  await writeFile(path.join(ws, 'no-home-policy.json'), JSON.stringify({ rules }));
  // Every row is a chat of its own, with its own private kernels: past the companion's
  // default cap of 4 (the cap itself is a row of attack-table-exec.test.ts).
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: ws,
    CELLMATE_CONFIG: path.join(ws, 'none.json'),
    CELLMATE_POLICY: path.join(ws, 'no-home-policy.json'),
    CELLMATE_MAX_PRIVATE_KERNELS: '64'
  };
  const handle = await startServer({
    workspace: ws,
    socketPath: path.join(ws, 's.sock'),
    env,
    logger: silentLogger,
    evalIdleTimeoutMs: 30_000
  });
  const client = await connectClient(handle.socketPath!);
  const cards: QuestionItem[] = [];
  await sendRequest(client.connection, 'cellmate/hello', {
    protocolVersion: PROTOCOL_VERSION,
    ...(pane ? { interactive: true } : {})
  });
  if (pane) {
    // The pane: shows every card and answers Deny (option 2) with a reason.
    client.onEvent((p) => {
      if (p.event.type !== 'item-added' || p.event.item.kind !== 'question') return;
      const item = p.event.item;
      cards.push(item);
      void sendRequest(client.connection, 'chat/answer', {
        chatId: p.chatId,
        questionId: item.questionId,
        answer: { action: 'answer', selected: [2], text: 'not this' }
      });
    });
  }
  return { ws, handle, client, cards, rows: 0 };
}

/** Runs one turn whose scripted model makes `calls`; returns the chat afterwards. */
async function turn(
  c: Companion,
  calls: Array<{ toolName: string; input: unknown }>,
  text = 'go',
  context?: SendContext
): Promise<Chat> {
  const script = `.cellmate/scripts/row-${++c.rows}.json`;
  await writeFile(
    path.join(c.ws, script),
    JSON.stringify({ turns: [[...(calls.length ? [{ toolCalls: calls }] : []), { text: 'done' }]] })
  );
  const chat = await sendRequest(c.client.connection, 'chat/create', { title: `row ${c.rows}` });
  const from = c.client.events.length;
  await sendRequest(c.client.connection, 'chat/send', {
    chatId: chat.id,
    text,
    model: { provider: 'scripted', model: 'scripted', scriptPath: script },
    ...(context ? { context } : {})
  });
  await c.client.turnEnded(chat.id, from);
  return sendRequest(c.client.connection, 'chat/get', { chatId: chat.id });
}

const toolItems = (chat: Chat): ToolCallItem[] => chat.items.filter((i): i is ToolCallItem => i.kind === 'tool');

/** Snapshot of every seeded target, compared byte for byte after each row. */
async function targets(ws: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of ['.env', 'secrets/key.txt', 'secret.ipynb', 'victim/f.txt', 'notes.md'])
    out[f] = await readFile(path.join(ws, f), 'utf8');
  out['victim/'] = (await readdir(path.join(ws, 'victim'))).join(',');
  return out;
}

describe.skipIf(!HAS_KERNELS)('attack table: paths and eval (issue #8, HARN-5/6, EVAL-5)', () => {
  let A: Companion;
  let before: Record<string, string>;

  beforeAll(async () => {
    A = await start(
      [
        { tool: 'write', pattern: '*', action: 'allow' },
        { tool: 'edit', pattern: '*', action: 'allow' },
        { tool: 'apply_patch', pattern: '*', action: 'allow' },
        { tool: 'notebook_*', pattern: '*', action: 'allow' },
        { tool: '*', pattern: '.env', action: 'deny' },
        { tool: '*', pattern: 'secrets/', action: 'deny' },
        { tool: '*', pattern: 'secret.ipynb', action: 'deny' },
        { tool: 'shell', pattern: 'rm*', action: 'deny' }
      ],
      false
    );
    before = await targets(A.ws);
  }, 60_000);
  afterAll(async () => {
    A?.client.close();
    await A?.handle.dispose();
    if (A) await rm(A.ws, { recursive: true, force: true });
  }, 30_000);

  const abs = (p: string) => path.join(A.ws, p);
  /** One refused call: the result says Denied, the model never saw the secret, nothing changed. */
  async function refused(toolName: string, input: unknown, expected: RegExp = /^Denied: /): Promise<ToolCallItem> {
    const chat = await turn(A, [{ toolName, input }]);
    const [item] = toolItems(chat);
    expect(item, JSON.stringify(input)).toBeDefined();
    expect(item!.output, JSON.stringify(input)).toMatch(expected);
    expect(JSON.stringify(chat), JSON.stringify(input)).not.toContain(SECRET);
    expect(await targets(A.ws)).toEqual(before);
    return item!;
  }

  // ── item 1: path subjects built by the registry ─────────────────────────────────────
  it.each([
    '.env',
    './.env',
    'sub/../.env',
    './/.env',
    'link-env',
    '.ENV',
    'secrets/key.txt',
    './secrets/key.txt',
    'link-secrets/key.txt',
    'secrets'
  ])(
    'read %s → denied by rule (canonical path)',
    async (p) => {
      await refused('read', { path: p });
    },
    30_000
  );

  it('read by absolute path → denied', async () => {
    await refused('read', { path: abs('.env') });
  }, 30_000);

  it.each([
    ['write', (p: string) => ({ path: p, content: 'API_TOKEN=attacker\n' })],
    ['edit', (p: string) => ({ path: p, old_string: 'API_TOKEN', new_string: 'X' })]
  ] as const)(
    '%s on ./.env, sub/../.env, absolute, symlink → denied; .env byte-identical',
    async (tool, args) => {
      for (const p of ['./.env', 'sub/../.env', abs('.env'), 'link-env', 'secrets/../.env']) {
        const item = await refused(tool, args(p));
        expect(item.output).toContain('"pattern":".env"');
      }
    },
    60_000
  );

  it('write of a new file into a denied folder through a symlinked folder → denied', async () => {
    await refused('write', { path: 'link-secrets/new.txt', content: 'x' });
    expect(existsSync(abs('secrets/new.txt'))).toBe(false);
  }, 30_000);

  it('apply_patch touching ./.env (and a harmless file) → denied, nothing written', async () => {
    for (const target of ['./.env', 'sub/../.env', 'link-env']) {
      const patch = `--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-public notes\n+changed\n--- a/${target}\n+++ b/${target}\n@@ -1 +1 @@\n-API_TOKEN=x\n+API_TOKEN=attacker\n`;
      await refused('apply_patch', { patch });
    }
  }, 30_000);

  it.each([
    ['notebook_read', { path: './secret.ipynb' }],
    ['notebook_read', { path: 'sub/../secret.ipynb' }],
    ['notebook_edit', { path: './secret.ipynb', edits: [{ action: 'delete', cell_id: 'c1' }] }],
    ['notebook_run', { path: './secret.ipynb', cell_ids: ['c1'] }]
  ])(
    '%s %j → denied; the notebook is byte-identical',
    async (tool, input) => {
      await refused(tool, input);
    },
    30_000
  );

  it('grep over the workspace withholds denied files (and says how many); grep on .env itself is denied', async () => {
    const chat = await turn(A, [{ toolName: 'grep', input: { pattern: 'SECRET_VALUE|public' } }]);
    const [item] = toolItems(chat);
    expect(item!.output).toContain('notes.md:1: public notes');
    expect(item!.output).toMatch(/\(\d+ files? withheld: the policy does not allow this tool to read/);
    expect(JSON.stringify(chat)).not.toContain(SECRET);
    await refused('grep', { pattern: 'TOKEN', path: './.env' });
    await refused('grep', { pattern: 'key', path: 'link-secrets' });
  }, 30_000);

  it('glob lists no denied names and counts them', async () => {
    const chat = await turn(A, [{ toolName: 'glob', input: { pattern: '**' } }]);
    const out = toolItems(chat)[0]!.output!;
    expect(out).toContain('notes.md');
    expect(out).not.toMatch(/^\.env$|secrets\/key\.txt|secret\.ipynb/m);
    expect(out).toMatch(/withheld/);
  }, 30_000);

  it('tool() from a kernel (actor kernel) goes through the same gate', async () => {
    const chat = await turn(A, [
      {
        toolName: 'eval',
        input: { description: 'read the env file through the bridge', code: 'print(tool("read", {"path": "./.env"}))' }
      }
    ]);
    const out = toolItems(chat).find((i) => i.name === 'eval')!.output!;
    expect(out).toMatch(/ToolError: Denied: read on "\.env"/);
    expect(JSON.stringify(chat)).not.toContain(SECRET);
    const js = await turn(A, [
      {
        toolName: 'eval',
        input: {
          description: 'write the env file through the bridge',
          language: 'javascript',
          code: 'await tool("write", { path: "sub/../.env", content: "x" })'
        }
      }
    ]);
    expect(toolItems(js).find((i) => i.name === 'eval')!.output).toMatch(/ToolError: Denied: write on "\.env"/);
    expect(await targets(A.ws)).toEqual(before);
  }, 60_000);

  it('@.env / @./.env / @secrets/key.txt mentions and a denied focused notebook are not attached; the note says so', async () => {
    const chat = await turn(A, [], 'summarise @.env and @./.env and @secrets/key.txt and @notes.md', {
      notebookPath: './secret.ipynb',
      selectedCells: [0]
    });
    const notice = chat.items.find((i) => i.kind === 'notice');
    expect(notice).toMatchObject({
      text: 'Context attached: @notes.md. Withheld by the policy (not attached): @.env, @./.env, @secrets/key.txt, ./secret.ipynb'
    });
    // The chat on disk: its journal (and a snapshot, once compacted) — issue #15's format.
    const dir = path.join(A.ws, '.cellmate', 'chats');
    const mine = (await readdir(dir)).filter((n) => n === `${chat.id}.jsonl` || n === `${chat.id}.json`);
    expect(mine).toContain(`${chat.id}.jsonl`);
    const file = (await Promise.all(mine.map((n) => readFile(path.join(dir, n), 'utf8')))).join('\n');
    expect(file).toContain('public notes');
    expect(file).not.toContain(SECRET);
  }, 30_000);

  it('@ completion does not offer files the policy keeps from read', async () => {
    const chat = await sendRequest(A.client.connection, 'chat/create', { title: 'completion' });
    const names = async (prefix: string) =>
      (await sendRequest(A.client.connection, 'context/complete', { chatId: chat.id, prefix })).items.map(
        (i) => i.name
      );
    expect(await names('secret')).toEqual([]);
    expect(await names('link-secrets')).toEqual([]);
    expect(await names('note')).toEqual(['notes.md']);
  }, 30_000);

  // ── item 2: shell in eval is shell ──────────────────────────────────────────────────
  it.each([
    ['python', '!rm -rf victim'],
    ['python', 'x = !rm -rf victim\nprint(x)'],
    ['python', '!!rm -rf victim'],
    ['python', '%%bash\nrm -rf victim'],
    ['python', '%%sh\nrm -rf victim'],
    ['python', '%sx rm -rf victim'],
    ['python', '%system rm -rf victim'],
    ['python', '%rm -rf victim'],
    ['python', 'get_ipython().system("rm -rf victim")'],
    ['python', 'for _ in range(1):\n    !rm -rf victim'],
    ['javascript', '!rm -rf victim'],
    ['javascript', '%%bash\nrm -rf victim']
  ])(
    'eval %s %j → the shell rule denies it in the cell; victim intact',
    async (language, code) => {
      const chat = await turn(A, [
        { toolName: 'eval', input: { description: 'clean up the victim folder now', language, code } }
      ]);
      const out = toolItems(chat).find((i) => i.name === 'eval')!.output!;
      expect(out).toMatch(
        /ToolError: Denied: shell on "rm -rf victim" is denied by the policy rule \{"tool":"shell","pattern":"rm\*","action":"deny"\}/
      );
      expect(await targets(A.ws)).toEqual(before);
      // The audit log has the kernel's shell call, denied by the rule.
      const audit = (await readFile(path.join(A.ws, '.cellmate', 'audit', `${chat.id}.jsonl`), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { tool: string; actor: string; decision: string });
      expect(audit).toContainEqual(
        expect.objectContaining({ tool: 'shell', actor: 'kernel', decision: 'denied-by-rule' })
      );
    },
    60_000
  );

  it.each([
    ['python', 'import os\nos.system("rm -rf victim")'],
    ['python', 'import subprocess as sp\nsp.run(["rm", "-rf", "victim"])'],
    ['python', 'from subprocess import check_output as co\nco("rm -rf victim", shell=True)'],
    ['python', 'import shutil\nshutil.rmtree("victim")'],
    ['python', 'from shutil import rmtree\nrmtree("victim")'],
    ['python', 'import os\nos.remove("victim/f.txt")'],
    ['python', 'from pathlib import Path\nPath("victim/f.txt").unlink()'],
    ['python', 'exec("import os; os.system(\'rm -rf victim\')")'],
    ['javascript', 'require("child_process").execSync("rm -rf victim")'],
    ['javascript', 'const { spawnSync: run } = require("node:child_process");\nrun("rm", ["-rf", "victim"])'],
    ['javascript', 'require("fs").rmSync("victim", { recursive: true, force: true })'],
    ['javascript', 'await require("fs/promises").unlink("victim/f.txt")']
  ])(
    'eval %s %j → judged as shell: denied before the cell runs; victim intact',
    async (language, code) => {
      const chat = await turn(A, [
        { toolName: 'eval', input: { description: 'clean up the victim folder now', language, code } }
      ]);
      const item = toolItems(chat).find((i) => i.name === 'eval')!;
      expect(item.output).toMatch(
        /^Denied: shell on "rm (-rf )?victim(\/f\.txt)?" \(the cell calls [^)]+, so it is judged as shell\) is denied by the policy rule/
      );
      expect(await targets(A.ws)).toEqual(before);
    },
    60_000
  );

  it.each([
    ['python', 'import os\nos.system("touch made-1")', 'made-1'],
    ['python', '%%bash\ntouch made-2', 'made-2'],
    ['python', 'import subprocess\nsubprocess.run("touch made-3", shell=True)', 'made-3'],
    ['javascript', 'require("child_process").execSync("touch made-4")', 'made-4']
  ])(
    'eval %s %j with no rule and no pane → asks → denied fail-closed; nothing created',
    async (language, code, made) => {
      const chat = await turn(A, [
        { toolName: 'eval', input: { description: 'create a marker file in the workspace', language, code } }
      ]);
      expect(toolItems(chat).find((i) => i.name === 'eval')!.output).toMatch(
        /Not run: (eval|shell) needs the user's approval .*nobody is connected to approve it, so it is denied \(fail-closed\)/
      );
      expect(existsSync(abs(made))).toBe(false);
    },
    60_000
  );

  it('strings and comments that mention os.system do not make a cell ask (regression: ordinary cells run)', async () => {
    const chat = await turn(A, [
      {
        toolName: 'eval',
        input: {
          description: 'print a string about os system',
          code: '# os.system("rm -rf victim")\nprint("subprocess.run([\'rm\'])", len("shutil.rmtree"))'
        }
      }
    ]);
    expect(toolItems(chat).find((i) => i.name === 'eval')!.output).toContain("subprocess.run(['rm']) 13");
  }, 60_000);

  it('regression rows that held: ../ and symlinks out are refused by confinement before the policy; notebook tools on symlinks out and bad JSON', async () => {
    await symlink('/etc', abs('link-out'));
    await refused('read', { path: '../outside.txt' }, /^Refused: "\.\.\/outside\.txt" is outside the workspace/);
    await refused('read', { path: 'link-out/hostname' }, /^Refused: .*resolves through a symlink/);
    await refused(
      'write',
      { path: '/tmp/cellmate-attack-outside.txt', content: 'x' },
      /^Refused: .*outside the workspace/
    );
    expect(existsSync('/tmp/cellmate-attack-outside.txt')).toBe(false);
    // Notebook tools: a symlink out is refused; a broken notebook is reported and left as it was.
    await symlink('/etc/hostname', abs('out.ipynb'));
    await refused('notebook_read', { path: 'out.ipynb' }, /^Refused: .*resolves through a symlink/);
    await writeFile(abs('broken.ipynb'), '{not json');
    await refused(
      'notebook_edit',
      { path: 'broken.ipynb', edits: [{ action: 'delete', cell_id: 'x' }] },
      /is not a valid nbformat 4 notebook/
    );
    expect(await readFile(abs('broken.ipynb'), 'utf8')).toBe('{not json');
  }, 30_000);
});

describe.skipIf(!HAS_KERNELS)('attack table with a pane attached: the shell approval card (EVAL-5, ASK-3)', () => {
  let B: Companion;
  beforeAll(async () => {
    B = await start([{ tool: '*', pattern: '.env', action: 'deny' }], true);
  }, 60_000);
  afterAll(async () => {
    B?.client.close();
    await B?.handle.dispose();
    if (B) await rm(B.ws, { recursive: true, force: true });
  }, 30_000);

  it.each([
    ['python', '!rm -rf victim', 'kernel'],
    ['python', '%%bash\nrm -rf victim', 'kernel'],
    ['python', 'import os\nos.system("rm -rf victim")', 'model'],
    ['javascript', '!rm -rf victim', 'kernel']
  ])(
    'eval %s %j shows the shell card (tool shell, subject the command); Deny keeps the victim',
    async (language, code, actor) => {
      const seen = B.cards.length;
      const chat = await turn(B, [
        { toolName: 'eval', input: { description: 'clean up the victim folder now', language, code } }
      ]);
      const cards = B.cards.slice(seen);
      expect(cards).toHaveLength(1);
      expect(cards[0]).toMatchObject({ type: 'approval', approval: { tool: 'shell', pattern: 'rm -rf victim' } });
      expect(cards[0]!.context).toMatch(/^rm -rf victim — /);
      expect(cards[0]!.question).toBe(
        `${actor === 'kernel' ? 'Code in a kernel wants' : 'The agent wants'} to run shell. Allow it?`
      );
      expect(toolItems(chat).find((i) => i.name === 'eval')!.output).toMatch(
        /Denied by the user: (shell|eval) was not run\. Their reason: not this/
      );
      expect(await readdir(path.join(B.ws, 'victim'))).toEqual(['f.txt']);
    },
    60_000
  );
});
