/** Title of a chat nobody has written in or named yet. */
export const DEFAULT_CHAT_TITLE = 'New chat';

/** Maximum title length derived from a first message. */
export const MAX_AUTO_TITLE_CHARS = 60;

/**
 * A title from the first user message: whitespace collapsed, cut at a word boundary near
 * {@link MAX_AUTO_TITLE_CHARS} with an ellipsis. Pure.
 */
export function titleFromMessage(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length === 0) return DEFAULT_CHAT_TITLE;
  if (flat.length <= MAX_AUTO_TITLE_CHARS) return flat;
  const cut = flat.slice(0, MAX_AUTO_TITLE_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > MAX_AUTO_TITLE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
