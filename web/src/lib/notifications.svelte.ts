// The bell's unread count, shared by the header, the notifications page and
// "For you". X-Unread-Count of GET /users/@me/notifications ($top=0 reads no
// rows) is the number.
import type { Schema } from './api';
import { afterWrite, apiWithHeaders } from './api';

export type Notification = Schema<'Notification'>;

export const bell = $state({ unread: 0 });

// One question at a time: asks that come while one runs make one more after
// it (a burst of writes asks twice, not once each), so the last answer is
// never older than the last ask.
let asking: Promise<void> | null = null;
let again = false;

export async function refreshUnread(): Promise<void> {
  if (asking) {
    again = true;
    return asking;
  }
  asking = (async () => {
    do {
      again = false;
      try {
        const r = await apiWithHeaders('/users/@me/notifications?$top=0', { background: true });
        bell.unread = Number(r.headers.get('X-Unread-Count') ?? 0);
      } catch {
        /* the bell keeps its last number; the page itself reports problems */
      }
    } while (again);
  })();
  try {
    await asking;
  } finally {
    asking = null;
  }
}

/**
 * Keeps the bell current once the person is signed in: at once after each of
 * their own changes (what they did may have answered or brought
 * notifications) and whenever the tab comes back into view or takes the
 * focus, with a modest poll for news while it stays open and visible.
 */
export function followUnread() {
  refreshUnread();
  afterWrite(() => void refreshUnread());
  const visible = () => document.visibilityState === 'visible';
  document.addEventListener('visibilitychange', () => visible() && refreshUnread());
  window.addEventListener('focus', () => refreshUnread());
  setInterval(() => visible() && refreshUnread(), 60_000);
}
