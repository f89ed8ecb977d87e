// Shapes of fleet, project and document shares and fleet subscriptions
// (docs/assets.md "Fleet shares", docs/projects.md "Project shares").
import { displayName } from './session.svelte';

export interface OrgPartial { id: string; name: string; description: string }
/** A user as revealUser shows them: the whole object to someone sharing an organisation, else only the id. */
export interface ShownUser { id: string; first_name?: string; last_name?: string; email?: string }
export interface WorkItemTypeRef { id: string; name: string; colour: string }

interface ShareCommon {
  id: string;
  owner_organisation: OrgPartial | null;
  organisation: OrgPartial | null;
  user: ShownUser | null;
  shared_by: ShownUser | null;
  created_at: string;
  responded_at: string | null;
}
export interface FleetShare extends ShareCommon {
  fleet: { id: string; organisation_id: string; name: string };
  work_item_type: WorkItemTypeRef | null;
  status: number;
}
export interface ProjectShare extends ShareCommon {
  project: { id: string; organisation_id: string; name: string; code: string };
  status: number;
}
export interface DocumentShare extends ShareCommon {
  document: { id: string; organisation_id: string; title: string; formatted_number: string };
  status: string;
  scope_view: boolean; scope_edit: boolean; scope_branch: boolean; scope_fork: boolean; scope_revisions: boolean; scope_export: boolean;
  share_to_users_organisation: boolean;
}
/** One row of GET /users/@me/shares. */
export type ShareItem =
  | { type: 'fleet'; share: FleetShare }
  | { type: 'project'; share: ProjectShare }
  | { type: 'document'; share: DocumentShare };

export interface FleetSubscription {
  id: string;
  fleet_id: string;
  location: { id: string; name: string } | null;
  work_item_type: WorkItemTypeRef | null;
  created_at: string;
}

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
export function recipientName(s: ShareCommon): string {
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
