import { api, type Schema } from './api';

/** The caller's own user object (GET /users/@me), as the API description states it. */
export type User = Schema<'UserExtended'>;
/** An organisation of the caller with their place in it (GET /users/@me/organisations). */
export type Organisation = Schema<'OrgContext'>;
/**
 * The organisation page's object: GET /organisations/{id} with the caller's
 * permissions and place from their own list (no place when they are not in it).
 */
export type OrgPage = Schema<'Organisation'> & { permissions: Record<string, boolean>; organisation_user?: Organisation['organisation_user'] };
/** The organisation object a change answers (PATCH /organisations/{id} and its images). */
export type OrgObject = Schema<'Organisation'>;

// currentOrg: the organisation the page shows (the switcher's choice), '' for none.
export const session = $state({ me: null as User | null, orgs: [] as Organisation[], currentOrg: '' });

export async function loadSession() {
  const [me, orgs] = await Promise.all([api('GET', '/users/@me'), api('GET', '/users/@me/organisations')]);
  session.me = me;
  session.orgs = orgs;
}

export async function reloadOrgs() {
  session.orgs = await api('GET', '/users/@me/organisations');
}

export function displayName(u: { first_name?: string; last_name?: string; email?: string }): string {
  return `${u.first_name ?? ''} ${u.last_name ?? ''}`.trim() || u.email || '';
}
