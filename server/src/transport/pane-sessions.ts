/**
 * Which pane may answer a chat's cards. Any connection with Jupyter's credentials can reach
 * the companion — a kernel cell that reads the token from Jupyter's runtime folder too — and
 * `interactive: true` in `cellmate/hello` is only what a connection says about itself. So
 * each interactive hello is a pane the server names: it issues the pane a secret (the lab
 * extension keeps it for its browser tab, so a reload is the same pane), and a chat belongs
 * to the pane whose request last started work in it (`chat/send`, `chat/retry`, `chat/edit`,
 * `chat/create`, `review/start`, an approved plan or orchestration). Card answers are taken
 * only from that pane; another connection is another pane, whatever it says.
 *
 * A chat no pane has claimed since the companion started (its work began before a restart,
 * or from no pane at all) takes answers from any pane, as before.
 *
 * A person's own settings (a skill turned on or off) belong to no chat: they are taken from
 * a pane the server named, and not while a turn another pane started is running — the
 * moment a model's cell could open a connection of its own and flip them.
 */
import { randomBytes, randomUUID } from 'node:crypto';

/** Panes remembered at once (a reload within this many new panes keeps its identity). */
const MAX_PANES = 1_000;

export class PaneSessions {
  private readonly panes = new Map<string, string>();
  private readonly owners = new Map<string, string>();

  /** The pane for a hello: the one `secret` names, else a new one with a new secret. */
  open(secret?: string): { paneId: string; secret: string } {
    const known = secret === undefined ? undefined : this.panes.get(secret);
    if (known !== undefined) return { paneId: known, secret: secret! };
    const fresh = randomBytes(32).toString('base64url');
    const paneId = randomUUID();
    this.panes.set(fresh, paneId);
    // Every hello without a known secret adds one: the oldest go first past the bound.
    for (const oldest of this.panes.keys()) {
      if (this.panes.size <= MAX_PANES) break;
      this.panes.delete(oldest);
    }
    return { paneId, secret: fresh };
  }

  /** `paneId` started work in `chatId`: its cards are that pane's to answer. */
  claim(chatId: string, paneId: string | undefined): void {
    if (paneId !== undefined) this.owners.set(chatId, paneId);
  }

  /**
   * Whether `paneId` may change a person's setting now: `no-pane` (the connection was named
   * no pane), the chat whose running turn another pane started, or `ok`.
   */
  maySetForPerson(
    paneId: string | undefined,
    runningChats: Iterable<string>
  ): 'ok' | 'no-pane' | { runningIn: string } {
    if (paneId === undefined) return 'no-pane';
    for (const chatId of runningChats) {
      const owner = this.owners.get(chatId);
      if (owner !== paneId) return { runningIn: chatId };
    }
    return 'ok';
  }

  /** Whether `paneId` may answer `chatId`'s cards (a connection without a pane never may). */
  mayAnswer(chatId: string, paneId: string | undefined): boolean {
    if (paneId === undefined) return false;
    const owner = this.owners.get(chatId);
    return owner === undefined || owner === paneId;
  }
}

/** One set of panes per companion (its services object). */
const byServices = new WeakMap<object, PaneSessions>();

export function paneSessionsOf(services: object): PaneSessions {
  let sessions = byServices.get(services);
  if (!sessions) {
    sessions = new PaneSessions();
    byServices.set(services, sessions);
  }
  return sessions;
}
