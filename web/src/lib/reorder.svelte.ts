// Drag to reorder a list (roles, toolbox sections and topics, induction
// questions): pointer events, as the document editor's clause drag, so a
// finger, a pen and a mouse all work. Press a list item's handle, move, let
// go: the item goes where the line shows. Escape, or a pointer the browser
// takes back (pointercancel), leaves the order as it was. Up/down buttons
// stay beside every handle: they do the same by keyboard and screen reader.
//
// The list element carries `data-reorder`; its items are its element
// children, in order. One DragReorder may serve several lists of the same
// kind (a toolbox's topics, one list per section): `group` names the list.

/** How an item looks while a drag runs. */
export type DragMark = '' | 'dragging' | 'drop-above' | 'drop-below';

/** The distance from the window's top or bottom edge where a drag scrolls the page. */
const EDGE = 56;

export class DragReorder {
  /** The list being dragged in, or null when no drag runs. */
  group = $state<string | null>(null);
  /** The index of the item being dragged. */
  from = $state(-1);
  /** The index it would have if dropped now (in the list as it will be). */
  to = $state(-1);

  #drop: (from: number, to: number, group: string) => void;

  /** drop runs once per drag that changes the order, with the item's old and new index. */
  constructor(drop: (from: number, to: number, group: string) => void) {
    this.#drop = drop;
  }

  /** How item index of the list group looks now: the one dragged, or the one the line is drawn at. */
  mark(index: number, group = ''): DragMark {
    if (this.group !== group || this.from < 0) return '';
    if (index === this.from) return 'dragging';
    if (index !== this.to) return '';
    return this.to < this.from ? 'drop-above' : 'drop-below';
  }

  /**
   * Starts a drag from a handle's pointerdown. index is the item's place in
   * its list; count, when given, is how many items from the top may take
   * part (the roles list keeps @everyone last).
   */
  start(ev: PointerEvent, index: number, { group = '', count }: { group?: string; count?: number } = {}) {
    if (this.group !== null || !ev.isPrimary || ev.button !== 0) return;
    const handle = ev.currentTarget as HTMLElement;
    const list = handle.closest<HTMLElement>('[data-reorder]');
    if (!list) return;
    const items = () => Array.from(list.children) as HTMLElement[];
    const n = Math.min(count ?? Infinity, items().length);
    if (index < 0 || index >= n || n < 2) return;
    const item = items()[index];
    ev.preventDefault();
    // The handle captures the pointer: a finger's moves keep coming to it.
    handle.setPointerCapture?.(ev.pointerId);

    this.group = group;
    this.from = index;
    this.to = index;
    const startY = ev.clientY;
    const startScroll = window.scrollY;
    let y = ev.clientY;
    document.documentElement.classList.add('reordering');

    // The place is where the pointer is among the other items' middles.
    const place = () => {
      const els = items();
      let to = 0;
      for (let j = 0; j < n; j++) {
        if (j === index || !els[j]) continue;
        const r = els[j].getBoundingClientRect();
        if (r.top + r.height / 2 < y) to++;
      }
      this.to = Math.min(to, n - 1);
      // the dragged item follows the pointer (CSSOM, which the CSP allows)
      item.style.transform = `translateY(${y - startY + window.scrollY - startScroll}px)`;
    };
    // Near the window's top or bottom edge the page scrolls, so a long list
    // (a phone's) can be crossed in one drag.
    let frame = 0;
    const scroll = () => {
      frame = 0;
      const step = y < EDGE ? -(EDGE - y) / 3 : y > window.innerHeight - EDGE ? (y - window.innerHeight + EDGE) / 3 : 0;
      if (step === 0) return;
      const before = window.scrollY;
      window.scrollBy(0, Math.round(step));
      if (window.scrollY === before) return; // the page's end
      place();
      frame = requestAnimationFrame(scroll);
    };
    const move = (e: PointerEvent) => {
      if (e.pointerId !== ev.pointerId) return;
      y = e.clientY;
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
      const [from, to] = [this.from, this.to];
      this.group = null;
      this.from = -1;
      this.to = -1;
      if (drop && to !== from) this.#drop(from, to, group);
    };
    const up = (e: PointerEvent) => {
      if (e.pointerId !== ev.pointerId) return;
      y = e.clientY;
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

/** list with the item at from moved to index to (a new array). */
export function moved<T>(list: T[], from: number, to: number): T[] {
  const out = list.slice();
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x);
  return out;
}
