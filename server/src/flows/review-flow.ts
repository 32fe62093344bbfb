import { ErrorCodes, type ModelSettings, type ReviewScope } from '@cellmate/protocol';
import type { ChatService } from '../chats/chat-service.js';
import { updateToolCards } from '../ports/tool-cards.js';
import type { Logger } from '../config/logger.js';
import { CellmateError } from '../base/errors.js';
import { reviewDisplay } from '../tools/add_review_node/review-display.js';
import type { StoredReview } from '../modes/review/review-port.js';
import type { ToolRegistry } from '../gate/registry.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';
import { profileOf } from '../modes/profiles.js';
import {
  collectGitDiff,
  collectNotebook,
  ReviewScopeError,
  type CollectedScope
} from '../modes/review/review-scope.js';
import type { ReviewStore } from '../modes/review/review-store.js';

/**
 * "Review changes" (SPEC MODE-4): the system — never a person's mode picker — puts a chat in
 * Review. {@link start} collects the scope (git diff or a notebook), creates the chat, sets
 * its mode to `review`, opens its durable review and sends the first message with the
 * pane's model settings. {@link approve} is the person's Approve on a finding: the same
 * `approve_review_node` call a peer reviewer makes, through the registry as actor `user`.
 * Every card of a review follows its changes (consensus, the verdict).
 */
export class ReviewFlow {
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly options: {
      reviews: ReviewStore;
      chats: ChatService;
      registry: () => ToolRegistry;
      workspace: string;
      env: NodeJS.ProcessEnv;
      logger: Logger;
    }
  ) {
    this.subscription = options.reviews.onDidChange((review) => this.updateCards(review));
  }

  /**
   * Starts a review chat and its first turn; returns once the turn has started.
   * @throws ReviewScopeError nothing to review (not a repository, no changes, no such notebook, a path the policy denies);
   *   CellmateError ProviderUnavailable (the chat is removed again)
   */
  async start(scope: ReviewScope, model: ModelSettings, origin?: string): Promise<{ chatId: string; turnId: string }> {
    const collected = await this.collect(scope);
    const chats = this.options.chats;
    const chat = chats.create(`Review: ${collected.label}`);
    try {
      chats.setMode(chat.id, 'review');
      this.options.reviews.start(
        chat.id,
        scope === 'git-diff' ? { kind: 'git-diff' } : { kind: 'notebook', path: collected.files[0]! },
        collected.label,
        collected.files
      );
      const { turnId } = await chats.send({ chatId: chat.id, text: collected.text, settings: model, origin });
      return { chatId: chat.id, turnId };
    } catch (error) {
      // An unusable model must not leave an empty review chat behind.
      await chats.delete(chat.id).catch(() => undefined);
      throw error;
    }
  }

  /**
   * The person approves a finding. Returns the tool's message; a refusal (the person wrote
   * it, an unknown finding) is `ok: false` with the registry's message.
   * @throws CellmateError ChatNotFound
   */
  async approve(chatId: string, nodeId: string): Promise<{ ok: boolean; message: string }> {
    this.options.chats.get(chatId, 1); // ChatNotFound first
    const r = await this.options.registry().call(
      'approve_review_node',
      { node_id: nodeId },
      {
        workspace: this.options.workspace,
        signal: new AbortController().signal,
        actor: 'user',
        chatId,
        profile: profileOf('review')
      }
    );
    return { ok: r.ok, message: r.output };
  }

  dispose(): void {
    this.subscription.dispose();
  }

  private async collect(scope: ReviewScope): Promise<CollectedScope> {
    const registry = this.options.registry();
    const workspace = this.options.workspace;
    if (scope === 'git-diff')
      return collectGitDiff(workspace, this.options.env, (f) => registry.isPathAllowed('read', f, workspace));
    let resolved;
    try {
      resolved = await resolveWorkspacePath(this.options.workspace, scope.notebook);
    } catch (error) {
      throw new ReviewScopeError(
        `Cannot review ${JSON.stringify(scope.notebook)}: ${error instanceof Error ? error.message : String(error)}`
      );
    }
    if (!resolved.relative.endsWith('.ipynb'))
      throw new ReviewScopeError(
        `Cannot review ${resolved.relative}: only notebooks (.ipynb) or the git diff can be reviewed.`
      );
    if (!resolved.exists)
      throw new ReviewScopeError(`Cannot review ${resolved.relative}: no such notebook (save it first).`);
    // The notebook's cells go to the model: the same path rules as the model's own `read`.
    if (!(await registry.isPathAllowed('read', resolved.relative, workspace))) {
      throw new ReviewScopeError(`Cannot review ${resolved.relative}: the policy does not let the agent read it.`);
    }
    return collectNotebook(resolved.absolute, resolved.relative);
  }

  /** Every card of the review in its chat shows its current findings and verdict. */
  private updateCards(review: StoredReview): void {
    updateToolCards(this.options.chats, review.chatId, {
      match: (item) => item.display?.kind === 'review' && item.display.reviewId === review.id,
      render: (item) => reviewDisplay(review, item.display?.kind === 'review' ? item.display.focus : undefined),
      onUnreadable: (error) => {
        if (!(error instanceof CellmateError && error.code === ErrorCodes.ChatNotFound))
          this.options.logger.warn(`review cards of chat ${review.chatId}: ${String(error)}`);
      }
    });
  }
}
