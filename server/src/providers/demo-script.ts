import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { Script, ScriptStep } from './scripted-script.js';

/**
 * The built-in offline demo (scripted provider, empty `scriptPath`): what a turn does, on
 * the notebook the person has open — a table and a plot made in its kernel by `eval`, then
 * a cell for that notebook proposed with `notebook_edit` (the approval card shows it as a
 * diff) — and how to configure a real model. Nothing it calls needs a file the folder may
 * lack, and its code runs without pandas or matplotlib (plain HTML and SVG instead), so a
 * fresh environment shows no red card. Every user message replays it.
 */
export function demoScript(prompt?: LanguageModelV3Prompt): Script {
  const notebook = prompt ? notebookInPrompt(prompt) : undefined;
  const steps: ScriptStep[] = [
    {
      text:
        "Hi! This is Cellmate's offline demo: a script plays instead of a model, so no key is needed and nothing leaves this machine. " +
        "A turn looks like this. First a small table, made in the notebook's kernel with the `eval` tool:",
      toolCalls: [{ toolName: 'eval', input: { description: 'Make a small sales table', code: TABLE_CODE } }]
    },
    {
      text: 'Then a plot of it, from the same kernel (the table is still there):',
      toolCalls: [{ toolName: 'eval', input: { description: 'Plot revenue by city', code: PLOT_CODE } }]
    }
  ];
  if (notebook) {
    steps.push({
      text: `Last, a cell for **${notebook.path}**. Edits to your notebook come as a diff on a card, and nothing changes until you approve it:`,
      toolCalls: [
        {
          toolName: 'notebook_edit',
          input: {
            path: notebook.path,
            edits: [{ action: 'insert', index: notebook.cells, cells: [{ cell_type: 'code', source: CELL_SOURCE }] }]
          }
        }
      ]
    });
  }
  steps.push({
    text:
      'That was the demo: `eval` ran code in the kernel (the table and the plot above)' +
      (notebook
        ? ', and `notebook_edit` proposed a cell as a diff'
        : '; open a notebook and run the demo again to see a cell edit proposed as a diff') +
      ". I can't answer questions, because this is a script, not a model.\n\n" +
      'To talk to a real model, open Settings → Cellmate and pick a provider:\n' +
      '- **openai**: set `OPENAI_API_KEY` in the environment that starts JupyterLab (or `apiKeys.openai` in `~/.cellmate/config.json`);\n' +
      '- **anthropic**: set `ANTHROPIC_API_KEY` (or `apiKeys.anthropic`);\n' +
      '- **openai-compatible** (Ollama, vLLM, llama.cpp, LM Studio): set the base URL, e.g. `http://127.0.0.1:11434/v1`.\n\n' +
      'Press **Leave** on the Demo badge at the top to go back to your own settings; the demo never changed them.'
  });
  return { kind: 'every', steps };
}

/** The notebook the pane said the person looks at (the context block `context-service.ts` attaches), if any. */
function notebookInPrompt(prompt: LanguageModelV3Prompt): { path: string; cells: number } | undefined {
  const user = [...prompt].reverse().find((m) => m.role === 'user');
  if (!user) return undefined;
  const text = user.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  const m = /The user is looking at notebook (.+?) \((\d+) cells?\)\./.exec(text);
  return m ? { path: m[1]!, cells: Number(m[2]) } : undefined;
}

/** The demo's data; its code keeps every helper inside a function, so the only name it leaves in the kernel is `cellmate_demo`. */
const ROWS =
  '[("Lyon", 265, 49.5, 12), ("Porto", 198, 52.0, 7), ("Turin", 312, 47.25, 15), ("Ghent", 143, 55.0, 4), ("Bergen", 221, 61.5, 9), ("Split", 187, 44.75, 6)]';

const TABLE_CODE = String.raw`def _cellmate_demo_table(rows):
    try:
        import pandas as pd
    except ImportError:  # no pandas here: the same table as HTML
        from IPython.display import HTML
        data = [dict(zip(["city", "units", "price", "returns"], r), revenue=r[1] * r[2]) for r in rows]
        head = "".join(f"<th>{k}</th>" for k in data[0])
        body = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in r.values()) + "</tr>" for r in data)
        display(HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"))
        return data
    df = pd.DataFrame(rows, columns=["city", "units", "price", "returns"])
    df["revenue"] = df["units"] * df["price"]
    df["share"] = (df["revenue"] / df["revenue"].sum()).round(3)
    display(df)
    return df
cellmate_demo = _cellmate_demo_table(${ROWS})
del _cellmate_demo_table`;

const PLOT_CODE = String.raw`def _cellmate_demo_plot(rows):
    cities = [r[0] for r in rows]
    revenue = [r[1] * r[2] for r in rows]
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # no matplotlib here: the same bars as SVG
        from IPython.display import SVG
        top = max(revenue)
        bars = "".join(f'<rect x="{10 + i * 50}" y="{150 - v / top * 130}" width="36" height="{v / top * 130}" fill="#1976d2"/><text x="{12 + i * 50}" y="168" font-size="11">{c}</text>' for i, (c, v) in enumerate(zip(cities, revenue)))
        display(SVG(f'<svg xmlns="http://www.w3.org/2000/svg" width="320" height="175">{bars}</svg>'))
        return
    fig, ax = plt.subplots(figsize=(4.5, 2.6))
    ax.bar(cities, revenue, color="#1976d2")
    ax.set_title("Revenue by city")
    fig.tight_layout()
    plt.show()
_cellmate_demo_plot(${ROWS})
del _cellmate_demo_plot`;

const CELL_SOURCE =
  '# From the Cellmate demo: the cities by revenue, largest first\ncellmate_demo.sort_values("revenue", ascending=False)';
