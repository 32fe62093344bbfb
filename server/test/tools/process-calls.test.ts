/**
 * EVAL-5: which eval cells are judged as shell — found on the syntax tree (ast-grep), so
 * aliases count and strings/comments never do. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import { findProcessCalls } from '../../src/tools/eval/process-calls.js';
import { shellJudgement } from '../../src/tools/eval/eval.js';

describe('findProcessCalls (EVAL-5)', () => {
  it.each([
    ['python', 'import os\nos.system("rm -rf victim")', 'rm -rf victim'],
    ['python', 'import os as o\no.popen("ls")', 'ls'],
    ['python', 'import subprocess as sp\nsp.run(["rm", "-rf", "victim"])', 'rm -rf victim'],
    ['python', 'from subprocess import Popen\nPopen(["git", "push", "--force"])', 'git push --force'],
    ['python', 'from os import system\nsystem("ls; rm -rf x")', 'ls; rm -rf x'],
    ['python', 'from os import system as s\ns(cmd)', 'python: s(cmd)'],
    ['python', 'import shutil\nshutil.rmtree("/")', 'rm -rf /'],
    ['python', 'import os\nos.unlink("a b.txt")', "rm 'a b.txt'"],
    ['python', 'import os\nos.rmdir("d")', 'rmdir d'],
    ['python', 'from pathlib import Path\nPath("x/y.txt").unlink()', 'rm x/y.txt'],
    ['python', 'p.rmdir()', 'rmdir {p}'],
    ['python', 'import os\nos.remove(path)', 'rm {path}'],
    ['python', 'import os\nos.execvp("rm", ["rm", "-rf", "v"])', 'rm -rf v'],
    ['python', 'run = __import__("subprocess").run\nrun("id", shell=True)', 'id'],
    ['python', 'import importlib\nimportlib.import_module("os").system("id")', 'id'],
    ['python', 'exec("import os; os.system(\'whoami\')")', 'whoami'],
    ['python', 'exec(code)', 'python: exec(code)'],
    ['python', 'import os\ngetattr(os, name)("x")', 'python: getattr(os, name)("x")'],
    ['python', 'import asyncio\nawait asyncio.create_subprocess_shell("ls")', 'ls'],
    ['python', 'import os\nos.system(f"rm -rf {d}")', 'python: os.system(f"rm -rf {d}")'],
    ['javascript', 'const cp = require("child_process"); cp.execSync("rm -rf victim")', 'rm -rf victim'],
    ['javascript', 'const { execSync: ex } = require("node:child_process"); ex(`ls -l`)', 'ls -l'],
    ['javascript', 'require("child_process").spawnSync("rm", ["-rf", "v"])', 'rm -rf v'],
    ['javascript', 'const fs = require("fs"); fs.rmSync("victim", { recursive: true })', 'rm -rf victim'],
    ['javascript', 'await require("fs/promises").unlink("a.txt")', 'rm a.txt'],
    ['javascript', 'const m = await import("child_process"); m.exec("id")', 'id'],
    ['javascript', 'cp["exec" + "Sync"]("id"); const cp = require("child_process")', 'id'],
    ['javascript', 'new Deno.Command("rm")', 'rm'],
    ['javascript', 'Deno.run({ cmd: ["ls"] })', 'javascript: Deno.run({ cmd: ["ls"] })'],
    ['javascript', 'eval("require(\'child_process\').execSync(\'id\')")', 'id']
  ] as const)('%s %j → %s', (language, code, subject) => {
    expect(findProcessCalls(code, language).map((c) => c.subject)).toContain(subject);
  });

  it.each([
    ['python', 'print("os.system(\'rm -rf x\')")  # os.system("rm")'],
    ['python', 'x = 1\n# subprocess.run(["rm"])\ns = "shutil.rmtree(\'v\')"'],
    ['python', '"""\nimport subprocess\nsubprocess.run("rm")\n"""'],
    ['python', 'import os\nprint(os.getcwd(), os.path.join("a", "b"))'],
    ['python', 'lst = [1, 2]\nlst.remove(1)\ndf.eval("a + b")\npd.read_csv("x.csv")'],
    ['python', '!rm -rf victim'],
    ['python', '%%bash\nrm -rf victim'],
    ['javascript', 'console.log("child_process.execSync(\'rm\')") // cp.execSync("rm")'],
    ['javascript', 'const x = [1, 2].map((n) => n * 2); x'],
    ['javascript', '!rm -rf victim']
  ] as const)('%s %j → nothing (strings, comments, ordinary code; shell magics are gated at run time)', (language, code) => {
    expect(findProcessCalls(code, language)).toEqual([]);
  });

  it('the shell judgement splits a literal command into its parts and carries the floor', () => {
    const [j] = shellJudgement('import os\nos.system("git status; rm -rf /")', 'python');
    expect(j).toMatchObject({ tool: 'shell', tier: 'exec', why: 'the cell calls os.system' });
    expect(j!.subjects).toEqual(expect.arrayContaining(['git status', 'rm -rf /']));
    expect(j!.danger).toMatch(/recursive delete/);
    expect(shellJudgement('x = 1', 'python')).toEqual([]);
  });
});
