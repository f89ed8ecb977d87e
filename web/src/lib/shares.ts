// Shapes of fleet, project and document shares and fleet subscriptions
// (docs/assets.md "Fleet shares", docs/projects.md "Project shares").
import type { Schema } from './api';
import { displayName } from './session.svelte';

export type OrgPartial = Schema<'OrgPartial'>;
/** A user as revealUser shows them: the whole object to someone sharing an organisation, else only the id. */
export type ShownUser = NonNullable<Schema<'UserRef'>>;
export type WorkItemTypeRef = Schema<'WorkItemTypeRef'>;

export type FleetShare = Schema<'FleetShare'>;
export type ProjectShare = Schema<'ProjectShare'>;
export type DocumentShare = Schema<'DocumentShare'>;
export type ShareItem = Schema<'ShareItem'>;

export type FleetSubscription = Schema<'FleetSubscription'>;

/** Fleet and project share statuses are numbers (0-3), document shares' their names. */
const statusNames = ['pending', 'accepted', 'rejected', 'revoked'];
export function statusName(s: number | string): string {
  return typeof s === 'number' ? (statusNames[s] ?? String(s)) : s;
}

/** A person a share names, as far as the viewer may see them. */
export function personName(u: ShownUser | null): string {
  if (!u) return '';
  return displayName(u) || `a person outside your organisations (user ${u.id})`;
}

/** Who a share is addressed to, as its owner sees it. */
export function recipientName(s: FleetShare | ProjectShare | DocumentShare): string {
  if (s.organisation) return `the organisation ${s.organisation.name}`;
  if (s.user) return personName(s.user);
  return 'an organisation that no longer exists';
}

/**
 * Who may share with the person (PATCH /users/@me allow_shares_from,
 * docs/users.md "GET /users/lookup"); 2 (connections) behaves as 1 while
 * there are no connections, so it is not offered.
 */
export const shareFromChoices: [number, string][] = [
  [0, 'No one'],
  [1, 'Fleet managers of organisations I am a member of'],
  [255, 'Anyone signed in who knows my confirmed e-mail address'],
];
