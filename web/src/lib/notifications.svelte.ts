// The bell's unread count, shared by the header, the notifications page and
// "For you". X-Unread-Count of GET /users/@me/notifications ($top=0 reads no
// rows) is the number.
import type { Schema } from './api';
import { apiWithHeaders } from './api';

export type Notification = Schema<'Notification'>;

export const bell = $state({ unread: 0 });

export async function refreshUnread() {
  try {
    const r = await apiWithHeaders<Notification[]>('/users/@me/notifications?$top=0');
    bell.unread = Number(r.headers.get('X-Unread-Count') ?? 0);
  } catch {
    /* the bell keeps its last number; the page itself reports problems */
  }
}
