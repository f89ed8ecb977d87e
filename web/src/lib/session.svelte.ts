import { api } from './api';

export interface User {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  position: string;
  company: string;
  phone_number: string;
  avatar_hash: string | null;
  email_confirmed: boolean;
  [k: string]: unknown;
}

export interface Organisation {
  id: string;
  name: string;
  description: string;
  location: string;
  code: string;
  member_count: number;
  member_approval: boolean;
  permissions?: Record<string, boolean>;
  organisation_user?: { is_owner: boolean; pending: boolean };
  [k: string]: unknown;
}

// currentOrg: the organisation the page shows (the switcher's choice), '' for none.
export const session = $state({ me: null as User | null, orgs: [] as Organisation[], currentOrg: '' });

export async function loadSession() {
  const [me, orgs] = await Promise.all([api<User>('GET', '/users/@me'), api<Organisation[]>('GET', '/users/@me/organisations')]);
  session.me = me;
  session.orgs = orgs;
}

export async function reloadOrgs() {
  session.orgs = await api<Organisation[]>('GET', '/users/@me/organisations');
}

export function displayName(u: { first_name?: string; last_name?: string; email?: string }): string {
  return `${u.first_name ?? ''} ${u.last_name ?? ''}`.trim() || u.email || '';
}
