/**
 * EVAL-5: which eval cells are judged as shell — found on the syntax tree (ast-grep), so
 * aliases count and strings/comments never do. Table-driven.
 */
import { describe, expect, it } from 'vitest';
import { rewriteMagics } from '@cellmate/kernel-bridge';
import {
  findProcessCalls,
  JS_WORDS,
  mayHaveProcessCalls,
  PY_WORDS,
  scanProcessCalls
} from '../../src/tools/eval/process-calls.js';
import { shellJudgement } from '../../src/tools/eval/eval.js';

const FINDINGS = [
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
  ['javascript', "eval(\"require('child_process').execSync('id')\")", 'id']
] as const;

describe('findProcessCalls (EVAL-5)', () => {
  it.each(FINDINGS)('%s %j → %s', (language, code, subject) => {
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
  ] as const)(
    '%s %j → nothing (strings, comments, ordinary code; shell magics are gated at run time)',
    (language, code) => {
      expect(findProcessCalls(code, language)).toEqual([]);
    }
  );

  it('the shell judgement splits a literal command into its parts and carries the floor', () => {
    const [j] = shellJudgement('import os\nos.system("git status; rm -rf /")', 'python');
    expect(j).toMatchObject({ tool: 'shell', tier: 'exec', why: 'the cell calls os.system' });
    expect(j!.subjects).toEqual(expect.arrayContaining(['git status', 'rm -rf /']));
    expect(j!.danger).toMatch(/recursive delete/);
    expect(shellJudgement('x = 1', 'python')).toEqual([]);
  });
});

describe('the word filter before the parse (issue #9: most cells are not parsed at all)', () => {
  const ORDINARY = [
    ['python', 'pass'],
    ['python', 'df.head()'],
    ['python', 'x = 1\ny = x * 2'],
    ['python', 'plt.plot(df["a"])\nplt.show()'],
    ['python', 'total = sum(v for v in values if v > 0)'],
    ['javascript', 'const x = [1, 2].map((n) => n * 2); x'],
    ['javascript', '1 + 1']
  ] as const;

  it('skips ordinary cells without parsing them', () => {
    for (const [language, code] of ORDINARY) expect(mayHaveProcessCalls(code, language), code).toBe(false);
  });

  it('never hides a finding: every reported cell passes, and a cell it skips has none when parsed anyway', () => {
    for (const [language, code] of FINDINGS)
      expect(mayHaveProcessCalls(rewriteMagics(code, language).code, language), code).toBe(true);
    // Each finding's cell with one of the filter's words broken at a time (and all of them):
    // whenever the filter then skips the cell, the full scan must find nothing there either.
    const words = { python: new RegExp(PY_WORDS.source, 'g'), javascript: new RegExp(JS_WORDS.source, 'g') };
    let skipped = 0;
    for (const [language, code] of [...FINDINGS, ...ORDINARY]) {
      const variants = [code, code.replace(words[language], (w) => `Q${w.slice(1)}`)];
      for (const m of code.matchAll(words[language]))
        variants.push(code.slice(0, m.index) + `Q${m[0].slice(1)}` + code.slice(m.index! + m[0].length));
      for (const v of variants) {
        const rewritten = rewriteMagics(v, language).code;
        if (mayHaveProcessCalls(rewritten, language)) continue;
        skipped++;
        expect(scanProcessCalls(rewritten, language), `${language}: ${v}`).toEqual([]);
      }
    }
    expect(skipped).toBeGreaterThan(FINDINGS.length);
  });

  it('always scans a cell with a non-ASCII character or an escape in it (Python folds ｏｓ to os; JavaScript reads \\u0065val as eval)', () => {
    expect(mayHaveProcessCalls('ｘ = 1', 'python')).toBe(true);
    expect(mayHaveProcessCalls('\\u0065val("1")', 'javascript')).toBe(true);
  });
});
