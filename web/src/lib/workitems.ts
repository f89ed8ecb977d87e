import type { Schema } from './api';
// Work items (docs/workitems.md): shapes the screens share.
export type Person = Schema<'User'>;
export type WorkItemType = Schema<'WorkItemType'>;
export type Schedule = Schema<'Schedule'>;
export type Invitee = Schedule['invitees'][number];
export type WorkItem = Schema<'WorkItem'>;

/** A datetime-local input's value as RFC 3339 (empty stays empty). */
export const iso = (v: string) => (v ? new Date(v).toISOString() : '');

/** A stored time as a datetime-local input's value, in this browser's zone. */
export function localInput(t: string | null): string {
  if (!t) return '';
  const d = new Date(t);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export const when = (t: string | null) => (t ? new Date(t).toLocaleString() : '—');
