/**
 * Kernel-side helper for IPython kernels, executed once per kernel (silently, not in the
 * history) before the first eval: defines `tool()`/`ToolError` (SPEC EVAL-5) and the
 * `__cellmate__` module the rewritten magics call (SPEC EVAL-4). Shell magics (`!cmd`,
 * `x = !cmd`, `%%bash`, `%sx`, aliases, `%%script`…) in the agent's cells run as `shell`
 * calls over the bridge (EVAL-5): same gate as the shell tool. Nothing is installed into
 * the user's environment. Idempotent: running it again replaces the helper.
 *
 * `tool()` only uses stdin when the running execute request is the agent's (request
 * metadata `{"cellmate": {"bridge": true}}`); in a cell the user runs it raises ToolError,
 * so the notebook is never left waiting for input.
 */
import { TOOL_CHANNEL_CHUNK, TOOL_CHANNEL_PREFIX } from './channel.js';

export const PYTHON_HELPER = String.raw`
def __cellmate_install():
    import sys, os, json, types, shlex, subprocess, importlib, re
    PREFIX = ${JSON.stringify(TOOL_CHANNEL_PREFIX)}
    CHUNK = ${TOOL_CHANNEL_CHUNK}
    mod = types.ModuleType('__cellmate__')

    class ToolError(Exception):
        """A tool() call was refused or failed; the message is the registry's."""

    def _kernel():
        try:
            from IPython import get_ipython
            k = getattr(get_ipython(), 'kernel', None)
        except Exception:
            k = None
        if k is None:
            raise ToolError('tool() needs an IPython kernel')
        try:
            parent = k.get_parent('shell')
        except TypeError:
            parent = k.get_parent()
        md = (parent or {}).get('metadata') or {}
        cm = md.get('cellmate')
        if not (isinstance(cm, dict) and cm.get('bridge')):
            raise ToolError('tool() works only in cells the Cellmate agent runs with eval; '
                            'this cell was run from the notebook')
        return k

    def _ask(k, obj):
        return k.raw_input(PREFIX + json.dumps(obj, separators=(',', ':')))

    seq = [0]

    def _call(name, args=None):
        """One bridge round trip; returns the registry's response dict."""
        k = _kernel()
        seq[0] += 1
        cid = seq[0]
        payload = json.dumps({'name': name, 'args': {} if args is None else args})
        parts = max(1, -(-len(payload) // CHUNK))
        reply = None
        for i in range(parts):
            reply = _ask(k, {'op': 'call', 'id': cid, 'part': i, 'parts': parts,
                             'data': payload[i * CHUNK:(i + 1) * CHUNK]})
        first = json.loads(reply)
        pieces = [first['data']]
        for i in range(1, first['parts']):
            pieces.append(json.loads(_ask(k, {'op': 'more', 'id': cid, 'part': i}))['data'])
        return json.loads(''.join(pieces))

    def tool(name, args=None):
        """Calls a Cellmate tool (same registry, tiers and approvals as the agent).
        Returns the tool's text output; raises ToolError when refused or failed."""
        res = _call(name, args)
        if not res.get('ok'):
            raise ToolError(res.get('error') or 'tool call failed')
        return res.get('output')

    tool.__cellmate__ = True

    _STATUS = re.compile(r'^\[(exit code (-?\d+)|killed .*)\]$')

    def _shell(cmd):
        """Runs cmd as a Cellmate shell call (EVAL-5, HARN-6): the policy, the
        dangerous-command floor, the approval card, fail-closed and the audit log apply
        exactly as to the shell tool. Returns (output text, exit code). A refused or
        denied command raises ToolError (the cell stops there, with the reason)."""
        # The shell tool's longest timeout: a magic is a command, not a cell (no idle budget).
        args = {'command': cmd, 'timeout_ms': 600000}
        try:
            args['cwd'] = os.getcwd()
        except OSError:
            pass
        res = _call('shell', args)
        if not res.get('ok'):
            raise ToolError(res.get('error') or 'shell call failed')
        text = res.get('output') or ''
        full = res.get('fullOutputFile')
        if full:
            try:
                with open(full, encoding='utf-8', errors='replace') as f:
                    text = f.read()
            except OSError:
                pass
        lines = text.split('\n')
        code = None
        while lines and (lines[-1].startswith('[') and lines[-1].endswith(']')):
            m = _STATUS.match(lines[-1])
            if m:
                code = int(m.group(2)) if m.group(2) is not None else -1
                lines.pop()
                break
            lines.pop()
        if lines == ['(no output)']:
            lines = []
        return '\n'.join(lines), code

    def sh(cmd, capture=False):
        """!cmd / %%bash / %sx: the command runs as a Cellmate shell call (see _shell).
        capture=True returns the output lines (x = !cmd), else prints them."""
        out, code = _shell(cmd)
        if capture:
            return out.splitlines()
        if out:
            print(out, flush=True)
        if code:
            print('[exit code %d]' % code, file=sys.stderr)

    def _install_shell_backstop():
        """IPython's own ways to start a shell (aliases such as %rm, get_ipython().system,
        getoutput, %%script/%%perl/…) go through the same gate in the agent's cells; the
        user's own cells keep IPython's behaviour."""
        try:
            from IPython import get_ipython
            ip = get_ipython()
        except Exception:
            return
        if ip is None or getattr(ip, '_cellmate_backstop', False):
            return

        def agent():
            try:
                _kernel()
                return True
            except ToolError:
                return False

        orig_system, orig_getoutput = ip.system, ip.getoutput

        def system(cmd):
            if not agent():
                return orig_system(cmd)
            sh(cmd)

        def getoutput(cmd, split=True, depth=0):
            if not agent():
                return orig_getoutput(cmd, split=split, depth=depth)
            out = sh(cmd, capture=True)
            try:
                from IPython.utils.text import SList
                out = SList(out)
            except Exception:
                pass
            return out if split else '\n'.join(out)

        ip.system = ip.system_piped = ip.system_raw = system
        ip.getoutput = getoutput
        for name in ('bash', 'sh', 'script', 'perl', 'ruby', 'python', 'python2', 'python3', 'pypy'):
            orig = ip.find_cell_magic(name)
            if orig is None:
                continue

            def magic(line, cell, _name=name, _orig=orig):
                if not agent():
                    return _orig(line, cell)
                sh(_script_command(_name, line, cell))
            ip.register_magic_function(magic, 'cell', name)
        ip._cellmate_backstop = True

    def _script_command(name, line, cell):
        """The shell command a script cell magic stands for: the body itself for bash/sh,
        else the interpreter reading the body from a here-document."""
        if name in ('bash', 'sh'):
            return cell
        args = re.sub(r'--(?:out|err|proc)\s+\S+|--bg|--no-raise-error', ' ', line)
        interp = ' '.join((args if name == 'script' else name + ' ' + args).split())
        tag = '__CELLMATE_SCRIPT__'
        return '%s <<\'%s\'\n%s\n%s' % (interp or 'sh', tag, cell.rstrip('\n'), tag)

    def cd(path):
        """%cd: changes the kernel's working directory."""
        os.chdir(os.path.expanduser(path))
        print(os.getcwd())

    def _canon(name):
        return re.sub(r'[-_.]+', '-', name).lower()

    def pip(argline):
        """%pip: runs pip with the kernel's own Python (an argument vector, no shell), then
        makes the next import see the result (import caches invalidated, the named
        packages' modules dropped)."""
        args = shlex.split(argline)
        p = subprocess.Popen([sys.executable, '-m', 'pip'] + args, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, bufsize=1)
        try:
            for line in p.stdout:
                print(line, end='', flush=True)
            rc = p.wait()
        except KeyboardInterrupt:
            p.kill()
            raise
        if rc != 0:
            print('[exit code %d]' % rc, file=sys.stderr)
        importlib.invalidate_caches()
        if not args or args[0] not in ('install', 'uninstall'):
            return
        names = set()
        for a in args[1:]:
            if a.startswith('-'):
                continue
            base = os.path.basename(a.rstrip('/'))
            base = re.split(r'[=<>!~\[;@ ]', base)[0]
            if base.endswith(('.whl', '.tar.gz', '.zip')):
                base = base.split('-')[0]
            if base:
                names.add(_canon(base))
        tops = set(n.replace('-', '_') for n in names)
        try:
            from importlib.metadata import packages_distributions
            for top, dists in packages_distributions().items():
                if any(_canon(d) in names for d in dists):
                    tops.add(top)
        except Exception:
            pass
        dropped = [m for m in list(sys.modules) if m.split('.')[0] in tops]
        for m in dropped:
            del sys.modules[m]
        print('[cellmate: import caches invalidated%s]' % (
            '; dropped %d module(s) of %s' % (len(dropped), ', '.join(sorted(tops))) if dropped else ''))

    def timeit(stmt, ns, number=0, repeat=7):
        """%timeit / %%timeit with the standard library's timeit."""
        import timeit as _t
        timer = _t.Timer(stmt, globals=ns)
        if not number:
            number, _ = timer.autorange()
        per = [t / number for t in timer.repeat(repeat=max(1, repeat), number=number)]
        mean = sum(per) / len(per)
        std = (sum((x - mean) ** 2 for x in per) / len(per)) ** 0.5

        def fmt(s):
            for unit, scale in (('s', 1), ('ms', 1e3), ('us', 1e6), ('ns', 1e9)):
                if s * scale >= 1 or unit == 'ns':
                    return '%.3g %s' % (s * scale, unit)

        print('%s +- %s per loop (mean +- std. dev. of %d runs, %d loops each)' % (
            fmt(mean), fmt(std), len(per), number))

    mod.tool, mod.ToolError, mod.sh, mod.cd, mod.pip, mod.timeit = tool, ToolError, sh, cd, pip, timeit
    mod.script_command = _script_command
    _install_shell_backstop()
    sys.modules['__cellmate__'] = mod
    try:
        from IPython import get_ipython
        ns = get_ipython().user_ns
    except Exception:
        ns = globals()
    ns['__cellmate__'] = mod
    old = ns.get('tool')
    if old is None or getattr(old, '__cellmate__', False):
        ns['tool'] = tool
    ns['ToolError'] = ToolError

__cellmate_install()
del __cellmate_install
`;
