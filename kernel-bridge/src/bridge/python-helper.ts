/**
 * Kernel-side helper for IPython kernels, executed once per kernel (silently, not in the
 * history) before the first eval: defines `tool()`/`ToolError` (SPEC EVAL-5) and the
 * `__cellmate__` module the rewritten magics call (SPEC EVAL-4). Nothing is installed into
 * the user's environment. Idempotent: running it again replaces the helper.
 *
 * `tool()` only uses stdin when the running execute request is the agent's (request
 * metadata `{"cellmate": {"bridge": true}}`); in a cell the user runs it raises ToolError,
 * so the notebook is never left waiting for input.
 */
import { BRIDGE_CHUNK, BRIDGE_PREFIX } from './protocol.js';

export const PYTHON_HELPER = String.raw`
def __cellmate_install():
    import sys, os, json, types, shlex, subprocess, importlib, re
    PREFIX = ${JSON.stringify(BRIDGE_PREFIX)}
    CHUNK = ${BRIDGE_CHUNK}
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

    def tool(name, args=None):
        """Calls a Cellmate tool (same registry, tiers and approvals as the agent).
        Returns the tool's text output; raises ToolError when refused or failed."""
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
        res = json.loads(''.join(pieces))
        if not res.get('ok'):
            raise ToolError(res.get('error') or 'tool call failed')
        return res.get('output')

    tool.__cellmate__ = True

    def sh(cmd, capture=False, shell=None):
        """!cmd / %%bash: runs a shell command, streaming its output."""
        argv = [shell, '-c', cmd] if shell else cmd
        if capture:
            p = subprocess.run(argv, shell=not shell, capture_output=True, text=True)
            return p.stdout.splitlines()
        p = subprocess.Popen(argv, shell=not shell, stdout=subprocess.PIPE,
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

    def cd(path):
        """%cd: changes the kernel's working directory."""
        os.chdir(os.path.expanduser(path))
        print(os.getcwd())

    def _canon(name):
        return re.sub(r'[-_.]+', '-', name).lower()

    def pip(argline):
        """%pip: runs pip with the kernel's own Python, then makes the next import see
        the result (import caches invalidated, the named packages' modules dropped)."""
        args = shlex.split(argline)
        sh(' '.join(shlex.quote(a) for a in [sys.executable, '-m', 'pip'] + args))
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
