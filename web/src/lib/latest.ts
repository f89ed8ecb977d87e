/**
 * Answers can arrive out of order when a screen reloads as someone types or
 * changes its filters quickly: an older, slower answer would replace the
 * newer one. Each reload takes a ticket, and only the latest ticket's answer
 * is applied.
 *
 *   const latest = new Latest();
 *   const current = latest.next();
 *   const page = await api(...);
 *   if (current()) shown = page;
 */
export class Latest {
  #asked = 0;

  /** A new ticket: the function says whether it is still the latest. */
  next(): () => boolean {
    const mine = ++this.#asked;
    return () => mine === this.#asked;
  }
}
