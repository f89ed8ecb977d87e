// Drag a card from one column of a board to another (a project's board:
// open and closed). Pointer events, as DragReorder (./reorder.svelte.ts), so
// a finger, a pen and a mouse all work: press the card's grip, move, let go
// over the other column. Escape, or a pointer the browser takes back
// (pointercancel), leaves the card where it was. The card's buttons stay:
// they do the same by keyboard and screen reader.
//
// Each column element carries `data-column="KEY"`. Only a move to another
// column is reported: the board keeps no order of its own inside a column
// (the API has none for work items), so a drop in the same column does nothing.

/** The distance from the window's top or bottom edge where a drag scrolls the page. */
const EDGE = 56;

export class ColumnDrag {
  /** The id of the card being dragged, or null when no drag runs. */
  card = $state<string | null>(null);
  /** The column the card would land in if dropped now ('' when over none). */
  over = $state('');

  #drop: (card: string, from: string, to: string) => void;

  /** drop runs once per drag that ends over another column. */
  constructor(drop: (card: string, from: string, to: string) => void) {
    this.#drop = drop;
  }

  /** Starts a drag from a grip's pointerdown: card is its id, from its column's key. */
  start(ev: PointerEvent, card: string, from: string) {
    if (this.card !== null || !ev.isPrimary || ev.button !== 0) return;
    const handle = ev.currentTarget as HTMLElement;
    const item = handle.closest<HTMLElement>('[data-card]');
    if (!item) return;
    ev.preventDefault();
    handle.setPointerCapture?.(ev.pointerId);
    this.card = card;
    this.over = from;
    const [startX, startY, startScroll] = [ev.clientX, ev.clientY, window.scrollY];
    let [x, y] = [ev.clientX, ev.clientY];
    document.documentElement.classList.add('reordering');

    // The column is the one whose box holds the pointer (the card itself
    // follows the pointer, so the boxes are read rather than hit-tested).
    const place = () => {
      this.over = '';
      for (const col of document.querySelectorAll<HTMLElement>('[data-column]')) {
        const r = col.getBoundingClientRect();
        if (x >= r.left && x <= r.right && y >= r.top && y <= r.bottom) this.over = col.dataset.column ?? '';
      }
      item.style.transform = `translate(${x - startX}px, ${y - startY + window.scrollY - startScroll}px)`;
    };
    let frame = 0;
    const scroll = () => {
      frame = 0;
      const step = y < EDGE ? -(EDGE - y) / 3 : y > window.innerHeight - EDGE ? (y - window.innerHeight + EDGE) / 3 : 0;
      if (step === 0) return;
      const before = window.scrollY;
      window.scrollBy(0, Math.round(step));
      if (window.scrollY === before) return;
      place();
      frame = requestAnimationFrame(scroll);
    };
    const move = (e: PointerEvent) => {
      if (e.pointerId !== ev.pointerId) return;
      [x, y] = [e.clientX, e.clientY];
      place();
      if (!frame) frame = requestAnimationFrame(scroll);
    };
    const end = (drop: boolean) => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', up);
      handle.removeEventListener('pointercancel', cancel);
      window.removeEventListener('keydown', key, true);
      if (frame) cancelAnimationFrame(frame);
      document.documentElement.classList.remove('reordering');
      item.style.transform = '';
      const to = this.over;
      this.card = null;
      this.over = '';
      if (drop && to && to !== from) this.#drop(card, from, to);
    };
    const up = (e: PointerEvent) => {
      if (e.pointerId !== ev.pointerId) return;
      [x, y] = [e.clientX, e.clientY];
      place();
      end(true);
    };
    const cancel = () => end(false);
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      end(false);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up);
    handle.addEventListener('pointercancel', cancel);
    window.addEventListener('keydown', key, true);
  }
}
