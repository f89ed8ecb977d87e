import type { Schema } from './api';
// Work items (docs/workitems.md): shapes the screens share.
export interface Person { id: string; first_name: string; last_name: string; email: string }
export type WorkItemType = Schema<'WorkItemType'>;
export interface Invitee { user: Person; status: string }
export interface Schedule { id: string; work_item_id: string | null; scheduled_start_at: string; scheduled_finish_at: string; invitees: Invitee[] }
export interface WorkItem {
  id: string; organisation_id: string; number: number; formatted_number: string; type_id: string; type: WorkItemType;
  title: string; description: string; status: 'open' | 'closed'; project_id: string | null; milestone_id: string | null;
  start_at: string | null; finish_at: string | null; assignees: Person[]; schedules: Schedule[];
  tracking: { created_at: string; closed_at: string | null; closed_by: Person | null };
}

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
