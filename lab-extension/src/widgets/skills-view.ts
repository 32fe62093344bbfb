/**
 * Skills view (SKILL-2/3): every skill found in `~/.cellmate/skills`, `.cellmate/skills`,
 * `.agents/skills` and `.claude/skills`, with its source, whether the model is offered it
 * (and why not: turned off, an untrusted workspace, shadowed by a skill of the same name,
 * invalid), and an On switch per skill (`skills/set-enabled`, kept in the person's home).
 * Opened by **Show Cellmate Skills** (`cellmate:show-skills`) and `/skills`, as a dialog.
 *
 * DOM hooks: `table.jp-cellmate-skills`, one `tr[data-skill][data-source][data-state]` per
 * skill, its switch `input.jp-cellmate-skill-switch[type=checkbox]`.
 */
import type { SkillInfo } from '@cellmate/protocol';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

/** A table of skills; `setEnabled` answers with the list afterwards. */
export function createSkillsTable(
  skills: readonly SkillInfo[],
  trans: TranslationBundle,
  setEnabled: (folder: string, enabled: boolean) => Promise<SkillInfo[]>
): Widget {
  const widget = new Widget();
  widget.addClass('jp-cellmate-skills-view');
  const render = (list: readonly SkillInfo[]): void => {
    widget.node.replaceChildren();
    if (list.length === 0) {
      const empty = document.createElement('p');
      empty.textContent = trans.__(
        'No skills are installed. A skill is a folder with a SKILL.md in ~/.cellmate/skills, .cellmate/skills, .agents/skills or .claude/skills.'
      );
      widget.node.appendChild(empty);
      return;
    }
    const table = document.createElement('table');
    table.className = 'jp-cellmate-skills jp-cellmate-metrics';
    const head = table.createTHead().insertRow();
    for (const label of [
      trans.__('On'),
      trans.__('Skill'),
      trans.__('Source'),
      trans.__('State'),
      trans.__('Description')
    ]) {
      const th = document.createElement('th');
      th.textContent = label;
      head.appendChild(th);
    }
    const body = table.createTBody();
    const refusal = document.createElement('p');
    refusal.className = 'jp-cellmate-skills-refusal';
    refusal.setAttribute('role', 'alert');
    refusal.hidden = true;
    for (const s of list) {
      const tr = body.insertRow();
      tr.dataset.skill = s.name;
      tr.dataset.source = s.source;
      tr.dataset.state = s.state;
      const toggle = document.createElement('input');
      toggle.type = 'checkbox';
      toggle.className = 'jp-cellmate-skill-switch';
      toggle.checked = s.state !== 'off';
      toggle.disabled = s.state === 'invalid';
      toggle.setAttribute('aria-label', trans.__('Offer the skill %1 to the agent', s.name));
      toggle.addEventListener('change', () => {
        toggle.disabled = true;
        setEnabled(s.folder, toggle.checked).then(render, (error: unknown) => {
          toggle.checked = !toggle.checked;
          toggle.disabled = false;
          // The companion says why (e.g. a turn another pane started is running): the person sees it.
          refusal.textContent = error instanceof Error ? error.message : String(error);
          refusal.hidden = false;
        });
      });
      tr.insertCell().appendChild(toggle);
      tr.insertCell().textContent = s.name;
      tr.insertCell().textContent = s.location;
      tr.insertCell().textContent = s.state === 'offered' ? trans.__('offered') : `${s.state}: ${s.problem ?? ''}`;
      tr.insertCell().textContent = s.description;
    }
    const note = document.createElement('p');
    note.className = 'jp-cellmate-metrics-note';
    note.textContent = trans.__(
      "The agent sees each offered skill's name and description, and reads a skill only when a task needs it. Skill text is third-party: it grants no permissions, and its scripts run only through the usual approvals."
    );
    widget.node.append(table, refusal, note);
  };
  render(skills);
  return widget;
}

/** Fetches the skills and opens the dialog (resolves once it is shown). */
export async function showSkillsDialog(
  fetchSkills: () => Promise<SkillInfo[]>,
  setEnabled: (folder: string, enabled: boolean) => Promise<SkillInfo[]>,
  trans: TranslationBundle
): Promise<void> {
  const skills = await fetchSkills();
  void showDialog({
    title: trans.__('Cellmate skills'),
    body: createSkillsTable(skills, trans, setEnabled),
    buttons: [Dialog.okButton({ label: trans.__('Close') })]
  });
}
