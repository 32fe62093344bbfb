/**
 * Silent kernel inspection for `@` mentions: Python snippets that print one
 * JSON line, run with `silent: true` and `store_history: false` on our own connection, so
 * nothing appears in the notebook, the execution count does not move and `_`/`Out` stay
 * as they were. The helpers live in a throwaway namespace, never in the user's globals.
 * Data is never printed whole: a DataFrame summary is its shape, columns with dtypes and
 * `head(5)` as text, cut to a few thousand characters.
 */
import type { KernelClient } from '@cellmate/kernel-bridge';
import type { MentionCandidate } from '@cellmate/protocol';

/** Characters of a summary's text table/repr kept for the model. */
export const SUMMARY_CHARS = 3_000;

const PY_HELPERS = String.raw`
import json as _j
def _describe(v):
    t = type(v)
    d = {"type": t.__name__, "module": getattr(t, "__module__", "")}
    shape = getattr(v, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(x, int) for x in shape):
        d["shape"] = list(shape)
    else:
        try:
            d["len"] = len(v)
        except Exception:
            pass
    return d
def _skip(k, v):
    import types
    return k.startswith("_") or k in ("In", "Out", "exit", "quit", "get_ipython") or isinstance(v, types.ModuleType) or callable(v) and not hasattr(v, "shape")
def _list(ns, prefix, limit):
    out = []
    for k, v in list(ns.items()):
        if k.startswith(prefix) and not _skip(k, v):
            out.append(dict(_describe(v), name=k))
    out.sort(key=lambda d: d["name"])
    return out[:limit]
def _state(ns, limit):
    out = []
    for k, v in list(ns.items()):
        if _skip(k, v):
            continue
        d = dict(_describe(v), name=k)
        try:
            import pandas as pd
            if isinstance(v, pd.DataFrame):
                d["cols"] = [str(c) for c in list(v.columns)[:30]]
                d["ncolumns"] = int(v.shape[1])
        except ImportError:
            pass
        out.append(d)
    out.sort(key=lambda d: d["name"])
    return out[:limit]
def _summary(ns, name, limit):
    if name not in ns:
        return {"name": name, "missing": True}
    v = ns[name]
    d = dict(_describe(v), name=name)
    try:
        import pandas as pd
        if isinstance(v, pd.DataFrame):
            d["columns"] = [[str(c), str(t)] for c, t in v.dtypes.items()][:100]
            d["ncolumns"] = int(v.shape[1])
            with pd.option_context("display.max_columns", 20, "display.width", 120, "display.max_colwidth", 40):
                d["head"] = v.head(5).to_string()[:limit]
            return d
        if isinstance(v, pd.Series):
            d["dtype"] = str(v.dtype)
            d["head"] = v.head(5).to_string()[:limit]
            return d
    except ImportError:
        pass
    dtype = getattr(v, "dtype", None)
    if dtype is not None:
        d["dtype"] = str(dtype)
    r = repr(v) if not hasattr(v, "shape") else repr(v)
    d["repr"] = r[:limit] + ("…" if len(r) > limit else "")
    return d
`;

function snippet(call: string): string {
  // exec in a fresh namespace: the user's globals gain nothing, not even a helper name.
  return `exec(${JSON.stringify(PY_HELPERS)} + ${JSON.stringify(`\nprint("\\x1eCELLMATE" + _j.dumps(${call}))`)}, {"_ns": get_ipython().user_ns})`;
}

/** Runs one snippet silently and returns its JSON line. */
export async function runSilent<T>(client: KernelClient, code: string, signal?: AbortSignal): Promise<T | undefined> {
  let out = '';
  const r = await client.execute(code, {
    silent: true,
    storeHistory: false,
    allowStdin: false,
    timeoutMs: 10_000,
    signal,
    onIOPub: (msg) => {
      const c = msg.content as { name?: string; text?: string };
      if (msg.header.msg_type === 'stream' && c.name === 'stdout' && typeof c.text === 'string') out += c.text;
    }
  });
  if (r.reply.content.status !== 'ok') return undefined;
  const line = out.split('\n').find((l) => l.startsWith('\u001eCELLMATE'));
  return line ? (JSON.parse(line.slice('\u001eCELLMATE'.length)) as T) : undefined;
}

interface VarInfo {
  name: string;
  type: string;
  module?: string;
  shape?: number[];
  len?: number;
  missing?: boolean;
  columns?: Array<[string, string]>;
  ncolumns?: number;
  head?: string;
  dtype?: string;
  repr?: string;
  cols?: string[];
}

/** One line for a variable: `DataFrame 3×2`, `list len 4`, `int`. */
export function describeVar(v: VarInfo): string {
  if (v.shape) return `${v.type} ${v.shape.join('×')}`;
  if (v.len !== undefined) return `${v.type} len ${v.len}`;
  return v.type;
}

/** Variables whose name starts with `prefix` (modules, functions and `_` names left out). */
export async function listVariables(
  client: KernelClient,
  prefix: string,
  signal?: AbortSignal
): Promise<MentionCandidate[]> {
  const vars = await runSilent<VarInfo[]>(client, snippet(`_list(_ns, ${JSON.stringify(prefix)}, 30)`), signal);
  return (vars ?? []).map((v) => ({ kind: 'variable' as const, name: v.name, detail: describeVar(v) }));
}

/** A compact summary of one variable for the model, or undefined when it does not exist. */
export async function summarizeVariable(
  client: KernelClient,
  name: string,
  signal?: AbortSignal
): Promise<string | undefined> {
  const v = await runSilent<VarInfo>(
    client,
    snippet(`_summary(_ns, ${JSON.stringify(name)}, ${SUMMARY_CHARS})`),
    signal
  );
  if (!v || v.missing) return undefined;
  return formatSummary(v, `@${v.name}`);
}

/**
 * The same summaries for several names in one silent round trip (a failing line's names):
 * names the kernel does not hold, modules and plain functions are left out. Each summary's
 * text is cut to `chars`.
 */
export async function summarizeVariables(
  client: KernelClient,
  names: readonly string[],
  chars = 1_500,
  signal?: AbortSignal
): Promise<string[]> {
  if (names.length === 0) return [];
  const call = `[_summary(_ns, n, ${chars}) for n in ${JSON.stringify(names)} if n in _ns and not _skip(n, _ns[n])]`;
  const vars = await runSilent<VarInfo[]>(client, snippet(call), signal);
  return (vars ?? []).map((v) => formatSummary(v, v.name));
}

function formatSummary(v: VarInfo, label: string): string {
  const lines = [
    `${label}: ${v.module && v.module !== 'builtins' ? `${v.module.split('.')[0]}.` : ''}${describeVar(v)}`
  ];
  if (v.columns) {
    lines.push(
      `columns (${v.ncolumns ?? v.columns.length}): ${v.columns.map(([c, t]) => `${c} (${t})`).join(', ')}${(v.ncolumns ?? 0) > v.columns.length ? ', …' : ''}`
    );
  }
  if (v.dtype) lines.push(`dtype: ${v.dtype}`);
  if (v.head !== undefined) lines.push(`head(5):\n${v.head}`);
  if (v.repr !== undefined) lines.push(`value: ${v.repr}`);
  return lines.join('\n');
}

/**
 * The names a Python kernel holds now, one line each (type, shape, a DataFrame's columns),
 * for a compacted conversation's summary (CTX-3): after the turns that built `df` are gone,
 * the agent still knows it exists. At most `limit` names; undefined when nothing answers.
 */
export async function kernelStateLines(
  client: KernelClient,
  limit = 40,
  signal?: AbortSignal
): Promise<string | undefined> {
  const vars = await runSilent<VarInfo[]>(client, snippet(`_state(_ns, ${limit})`), signal);
  if (!vars) return undefined;
  if (vars.length === 0) return '(no user variables)';
  return vars
    .map((v) => {
      const cols = v.cols
        ? `; columns (${v.ncolumns ?? v.cols.length}): ${v.cols.join(', ')}${(v.ncolumns ?? 0) > v.cols.length ? ', …' : ''}`
        : '';
      return `- ${v.name}: ${v.module && v.module !== 'builtins' ? `${v.module.split('.')[0]}.` : ''}${describeVar(v)}${cols}`;
    })
    .join('\n');
}
