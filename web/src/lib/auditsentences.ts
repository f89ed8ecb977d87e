// The audit log in sentences (issue 29): one table, every write route of
// server/routes.go (TestAuditSentencesCoverRoutes checks) to what happened
// in words, what kind of change it was and the area of the app it belongs
// to. The API's entries keep their route patterns; the screen words them.

export type Happened = 'created' | 'changed' | 'deleted' | 'signed' | 'shared' | 'other';

/** route pattern -> [what happened, area, the words after the actor's name]. */
export const auditSentences: Record<string, [Happened, string, string]> = {
  "POST /auth/register": ["created", "Account", "created their account"],
  "POST /oauth/authorize": ["other", "Account", "signed in"],
  "POST /auth/forgot": ["other", "Account", "asked to reset a password"],
  "POST /auth/reset": ["changed", "Account", "reset their password"],
  "POST /oauth/token": ["other", "Account", "signed in"],
  "POST /oauth/revoke": ["other", "Account", "signed out"],
  "POST /admin/users/:id/password-reset": ["other", "Account", "sent a password reset to {user}"],
  "PATCH /users/@me": ["changed", "Account", "changed their profile"],
  "DELETE /users/@me": ["deleted", "Account", "deleted their account"],
  "POST /users/@me/verify-phone-number": ["other", "Account", "asked for a code to confirm their phone number"],
  "POST /users/@me/emails": ["created", "Account", "added an e-mail address"],
  "PATCH /users/@me/emails/:id": ["changed", "Account", "changed an e-mail address"],
  "PATCH /users/@me/notifications/:id": ["changed", "Account", "marked a notification read or unread"],
  "POST /users/@me/notifications/read-all": ["changed", "Account", "marked all their notifications read"],
  "DELETE /users/@me/emails/:id": ["deleted", "Account", "removed an e-mail address"],
  "POST /users/@me/emails/:id/verify": ["other", "Account", "asked for a confirmation mail"],
  "PATCH /users/@me/organisations/:id/email": ["changed", "People", "chose the e-mail address {org} sees"],
  "DELETE /users/@me/organisations/:id": ["deleted", "People", "left {org}"],
  "PUT /users/@me/qr/token": ["changed", "Account", "renewed their QR code for meetings"],
  "POST /users/@me/qr/scan": ["other", "Site", "scanned a QR code"],
  "POST /users/@me/document-shares/:id/accept": ["shared", "Account", "accepted a shared document"],
  "POST /users/@me/document-shares/:id/reject": ["shared", "Account", "turned down a shared document"],
  "POST /users/@me/project-shares/:id/accept": ["shared", "Account", "accepted a shared project"],
  "POST /users/@me/project-shares/:id/reject": ["shared", "Account", "turned down a shared project"],
  "POST /users/@me/fleet-shares/:id/accept": ["shared", "Account", "accepted a shared fleet"],
  "POST /users/@me/fleet-shares/:id/reject": ["shared", "Account", "turned down a shared fleet"],
  "POST /users/@me/fleets/:id/subscriptions": ["created", "Assets", "subscribed to a fleet"],
  "PATCH /users/@me/fleets/:id/subscriptions/:subscription": ["changed", "Assets", "changed a fleet subscription"],
  "DELETE /users/@me/fleets/:id/subscriptions/:subscription": ["deleted", "Assets", "ended a fleet subscription"],
  "POST /users/@me/toolboxes/:id/sign": ["signed", "Site", "signed a toolbox talk"],
  "POST /users/@me/witness/:id/sign": ["signed", "Work", "signed as a witness"],
  "POST /organisations/:id/inductions": ["created", "Site", "created an induction"],
  "PATCH /inductions/:id": ["changed", "Site", "changed an induction"],
  "POST /inductions/:id/users/:user": ["created", "Site", "assigned an induction to {user}"],
  "DELETE /inductions/:id/users/:user": ["deleted", "Site", "took an induction away from {user}"],
  "POST /users/@me/inductions/:id/records": ["signed", "Site", "completed an induction"],
  "POST /organisations/:id/toolboxes": ["created", "Site", "created a toolbox talk"],
  "PATCH /toolboxes/:id": ["changed", "Site", "changed a toolbox talk"],
  "POST /toolboxes/:id/conduct": ["changed", "Site", "started the meeting of a toolbox talk"],
  "POST /toolboxes/:id/archive": ["changed", "Site", "archived a toolbox talk"],
  "POST /toolboxes/:id/unarchive": ["changed", "Site", "took a toolbox talk out of the archive"],
  "POST /toolboxes/:id/sections": ["created", "Site", "created a section of a toolbox talk"],
  "PATCH /toolboxes/:id/sections/:section": ["changed", "Site", "changed a section of a toolbox talk"],
  "DELETE /toolboxes/:id/sections/:section": ["deleted", "Site", "deleted a section of a toolbox talk"],
  "POST /toolboxes/:id/topics": ["created", "Site", "created a topic of a toolbox talk"],
  "PATCH /toolboxes/:id/topics/:topic": ["changed", "Site", "changed a topic of a toolbox talk"],
  "DELETE /toolboxes/:id/topics/:topic": ["deleted", "Site", "deleted a topic of a toolbox talk"],
  "POST /toolboxes/:id/sign": ["signed", "Site", "recorded a signature on a toolbox talk"],
  "POST /toolboxes/:id/schedules": ["created", "Site", "scheduled a session of a toolbox talk"],
  "POST /organisations/:id/schedules": ["created", "Site", "scheduled a session"],
  "PATCH /schedules/:id": ["changed", "Site", "changed a session"],
  "DELETE /schedules/:id": ["deleted", "Site", "deleted a session"],
  "PUT /schedules/:id/invitees/:user": ["created", "Site", "invited {user} to a session"],
  "DELETE /schedules/:id/invitees/:user": ["deleted", "Site", "uninvited {user} from a session"],
  "POST /schedules/:id/check-in": ["changed", "Site", "checked someone in to a session"],
  "POST /schedules/:id/decline": ["changed", "Site", "declined a session"],
  "POST /organisations": ["created", "Settings", "created the organisation {org}"],
  "PATCH /organisations/:id": ["changed", "Settings", "changed the details of {org}"],
  "DELETE /organisations/:id": ["deleted", "Settings", "deleted the organisation {org}"],
  "PATCH /organisations/:id/members/:user": ["changed", "People", "changed the membership of {user}"],
  "DELETE /organisations/:id/members/:user": ["deleted", "People", "removed {user} from the organisation"],
  "PUT /organisations/:id/bans/:user": ["created", "People", "banned {user}"],
  "DELETE /organisations/:id/bans/:user": ["deleted", "People", "lifted the ban of {user}"],
  "POST /organisations/:id/sync/pairing-codes": ["created", "Settings", "made a pairing code for a site laptop"],
  "DELETE /organisations/:id/sync/nodes/:node": ["deleted", "Settings", "revoked a site laptop's pairing"],
  "POST /sync/pair": ["created", "Settings", "paired a site laptop with the code they made"],
  "POST /sync/exchange": ["other", "Settings", "synced a site laptop"],
  "POST /organisations/:id/sync/now": ["other", "Settings", "started an exchange with head office"],
  "POST /sync/objects/missing": ["other", "Settings", "asked which documents and files a site laptop still has to send"],
  "PUT /sync/objects/:kind/:hash": ["other", "Settings", "received a document part or file from a site laptop"],
  "POST /organisations/:id/domains": ["created", "Settings", "created an e-mail domain"],
  "PATCH /organisations/:id/domains/:domain": ["changed", "Settings", "changed an e-mail domain"],
  "DELETE /organisations/:id/domains/:domain": ["deleted", "Settings", "deleted an e-mail domain"],
  "POST /organisations/:id/domains/:domain/verify": ["changed", "Settings", "checked the record of an e-mail domain"],
  "POST /organisations/:id/sync-conflicts/:conflict/settle": ["changed", "Settings", "settled something two offices did apart: a name or code given twice, or a decision about access"],
  "POST /organisations/:id/sync-conflicts/:conflict/undo": ["changed", "Members", "gave back access that head office had taken when two offices changed it opposite ways while apart"],
  // Not a route: the hub's judgement when two offices changed access at once (docs/sync.md).
  "SYNC security": ["changed", "Members", "kept the stricter of two changes to access made while offices were apart"],
  // Not routes: the hub's judgement of a document's heads both offices moved (docs/sync.md).
  "SYNC document merged": ["changed", "Work", "merged a site office's changes into a document"],
  "SYNC document kept apart": ["other", "Work", "kept a site office's changes apart for a person to settle in a document"],
  // Not a route: one per exchange with a site laptop and organisation, with what it moved (details.count; values received and sent).
  "SYNC exchange": ["other", "Settings", "exchanged {count} changes with a site laptop"],
  "PUT /organisations/:id/icon": ["changed", "Settings", "changed the icon of {org}"],
  "DELETE /organisations/:id/icon": ["deleted", "Settings", "removed the icon of {org}"],
  "PUT /organisations/:id/banner": ["changed", "Settings", "changed the banner of {org}"],
  "DELETE /organisations/:id/banner": ["deleted", "Settings", "removed the banner of {org}"],
  "PUT /organisations/:id/logo": ["changed", "Settings", "changed the logo of {org}"],
  "DELETE /organisations/:id/logo": ["deleted", "Settings", "removed the logo of {org}"],
  "PATCH /admin/organisations/:id": ["changed", "Settings", "changed the limits of {org}"],
  "POST /organisations/:id/workgroups": ["created", "People", "created a workgroup"],
  "PATCH /workgroups/:id": ["changed", "People", "changed a workgroup"],
  "DELETE /workgroups/:id": ["deleted", "People", "deleted a workgroup"],
  "POST /workgroups/:id/teams": ["created", "People", "created a team"],
  "PUT /workgroups/:id/teams/:team/members/:user": ["created", "People", "added {user} to a team"],
  "PATCH /workgroups/:id/teams/:team/members/:user": ["changed", "People", "changed the team role of {user}"],
  "DELETE /workgroups/:id/teams/:team/members/:user": ["deleted", "People", "took {user} out of a team"],
  "PATCH /team/:id": ["changed", "People", "changed a team"],
  "DELETE /team/:id": ["deleted", "People", "deleted a team"],
  "POST /organisations/:id/systems": ["created", "Site", "created a system"],
  "PATCH /systems/:id": ["changed", "Site", "changed a system"],
  "POST /organisations/:id/prefixes": ["created", "Settings", "created a numbering prefix"],
  "PATCH /api/prefixes/:id": ["changed", "Settings", "changed a numbering prefix"],
  "DELETE /api/prefixes/:id": ["deleted", "Settings", "deleted a numbering prefix"],
  "POST /organisations/:id/locations": ["created", "Site", "created a location"],
  "PATCH /locations/:id": ["changed", "Site", "changed a location"],
  "POST /locations/:id/sub-locations": ["created", "Site", "created a sub-location"],
  "PATCH /sub-locations/:id": ["changed", "Site", "changed a sub-location"],
  "PUT /locations/:id/inductions/:induction": ["created", "Site", "required an induction at a location"],
  "DELETE /locations/:id/inductions/:induction": ["deleted", "Site", "stopped requiring an induction at a location"],
  "POST /organisations/:id/disciplines": ["created", "Settings", "created a discipline"],
  "PATCH /api/disciplines/:id": ["changed", "Settings", "changed a discipline"],
  "POST /organisations/:id/work-item-types": ["created", "Work", "created a work item type"],
  "PATCH /work-item-types/:id": ["changed", "Work", "changed a work item type"],
  "POST /organisations/:id/workitems": ["created", "Work", "created a work item"],
  "PATCH /workitems/:id": ["changed", "Work", "changed a work item"],
  "POST /workitems/:id/schedules": ["created", "Work", "scheduled a visit"],
  "PUT /workitems/:id/subscription": ["created", "Work", "followed a work item"],
  "DELETE /workitems/:id/subscription": ["deleted", "Work", "stopped following a work item"],
  "POST /organisations/:id/integrations": ["created", "Settings", "created an integration"],
  "PATCH /integrations/:id": ["changed", "Settings", "changed an integration"],
  "POST /integrations/:id/sync": ["other", "Settings", "sent a test event to an integration"],
  "POST /organisations/:id/roles": ["created", "People", "created a role"],
  "PATCH /organisations/:id/roles": ["changed", "People", "reordered the roles"],
  "PUT /organisations/:id/members/:user/roles/:role": ["changed", "People", "gave {user} a role"],
  "DELETE /organisations/:id/members/:user/roles/:role": ["changed", "People", "took a role from {user}"],
  "PUT /organisations/:id/permissions/:target": ["changed", "People", "changed permissions in {org}"],
  "PATCH /roles/:id": ["changed", "People", "changed a role"],
  "DELETE /roles/:id": ["deleted", "People", "deleted a role"],
  "POST /organisations/:id/invites": ["created", "People", "created an invite"],
  "PATCH /invites/:code": ["changed", "People", "changed an invite"],
  "POST /invites/:code": ["created", "People", "joined with an invite"],
  "DELETE /invites/:code": ["deleted", "People", "revoked an invite"],
  "POST /organisations/:id/fleets": ["created", "Assets", "created a fleet"],
  "PATCH /fleets/:id": ["changed", "Assets", "changed a fleet"],
  "DELETE /fleets/:id": ["deleted", "Assets", "deleted a fleet"],
  "PATCH /fleets/:id/permissions/:roleId": ["changed", "Assets", "changed permissions on a fleet"],
  "POST /fleets/:id/shares": ["shared", "Assets", "shared a fleet"],
  "DELETE /fleets/:id/shares/:share": ["deleted", "Assets", "stopped sharing a fleet"],
  "POST /organisations/:id/asset-statuses": ["created", "Assets", "created an asset status"],
  "PATCH /api/assetstatuses/:id": ["changed", "Assets", "changed an asset status"],
  "DELETE /api/assetstatuses/:id": ["deleted", "Assets", "deleted an asset status"],
  "POST /organisations/:id/asset-zones": ["created", "Assets", "created an asset zone"],
  "PATCH /api/assetzones/:id": ["changed", "Assets", "changed an asset zone"],
  "DELETE /api/assetzones/:id": ["deleted", "Assets", "deleted an asset zone"],
  "POST /organisations/:id/asset-fields": ["created", "Assets", "created an asset field"],
  "PATCH /api/assetfields/:id": ["changed", "Assets", "changed an asset field"],
  "DELETE /api/assetfields/:id": ["deleted", "Assets", "deleted an asset field"],
  "POST /organisations/:id/asset-types": ["created", "Assets", "created an asset type"],
  "PATCH /api/assettype/:id": ["changed", "Assets", "changed an asset type"],
  "DELETE /api/assettype/:id": ["deleted", "Assets", "deleted an asset type"],
  "PUT /api/assettype/:id/asset-fields/:fieldId": ["changed", "Assets", "added a field to an asset type"],
  "DELETE /api/assettype/:id/asset-fields/:fieldId": ["changed", "Assets", "took a field off an asset type"],
  "PUT /api/assettype/:id/asset-zones/:zoneId": ["changed", "Assets", "added a zone to an asset type"],
  "DELETE /api/assettype/:id/asset-zones/:zoneId": ["changed", "Assets", "took a zone off an asset type"],
  "POST /organisations/:id/asset-subscriptions": ["created", "Assets", "created an asset subscription"],
  "PATCH /asset-subscriptions/:id": ["changed", "Assets", "changed an asset subscription"],
  "POST /organisations/:id/assets": ["created", "Assets", "created an asset"],
  "POST /organisations/:id/assets/import": ["created", "Assets", "imported {count} assets"],
  "PATCH /api/assets/:id": ["changed", "Assets", "changed an asset"],
  "PATCH /api/assets/:id/fields": ["changed", "Assets", "changed the fields of an asset"],
  "POST /organisations/:id/asset-groups": ["created", "Assets", "created an asset group"],
  "PATCH /api/assetgroups/:id": ["changed", "Assets", "changed an asset group"],
  "DELETE /api/assetgroups/:id": ["deleted", "Assets", "deleted an asset group"],
  "PATCH /api/assetgroups/:id/fields": ["changed", "Assets", "changed the fields of an asset group"],
  "PUT /api/assetgroups/:id/assets/:assetId": ["changed", "Assets", "added an asset to a group"],
  "PATCH /api/assetgroups/:id/assets/:assetId": ["changed", "Assets", "moved an asset within a group"],
  "DELETE /api/assetgroups/:id/assets/:assetId": ["changed", "Assets", "took an asset out of a group"],
  "POST /api/assetgroups/:id/logs": ["created", "Assets", "added a log entry"],
  "PATCH /api/assetlogs/:id": ["changed", "Assets", "changed a log entry"],
  "DELETE /api/assetlogs/:id": ["deleted", "Assets", "deleted a log entry"],
  "PUT /api/assetlogs/:id/attachment": ["changed", "Assets", "attached a file to a log entry"],
  "POST /organisations/:id/projects": ["created", "Work", "created a project"],
  "PATCH /projects/:id": ["changed", "Work", "changed a project"],
  "PATCH /projects/:id/permissions/:roleId": ["changed", "Work", "changed permissions on a project"],
  "POST /projects/:id/shares": ["shared", "Work", "shared a project"],
  "DELETE /projects/:id/shares/:share": ["deleted", "Work", "stopped sharing a project"],
  "POST /projects/:id/milestones": ["created", "Work", "created a milestone"],
  "PATCH /milestones/:id": ["changed", "Work", "changed a milestone"],
  "POST /projects/:id/packages": ["created", "Work", "created a package"],
  "PATCH /packages/:id": ["changed", "Work", "changed a package"],
  "PATCH /packages/:id/permissions/:roleId": ["changed", "Work", "changed permissions on a package"],
  "POST /organisations/:id/document-types": ["created", "Work", "created a document type"],
  "PATCH /document-types/:id": ["changed", "Work", "changed a document type"],
  "DELETE /document-types/:id": ["deleted", "Work", "deleted a document type"],
  "POST /organisations/:id/document-fields": ["created", "Work", "created a document field"],
  "PATCH /document-fields/:id": ["changed", "Work", "changed a document field"],
  "POST /documents": ["created", "Work", "created a document"],
  "PATCH /documents/:id": ["changed", "Work", "changed a document"],
  "DELETE /documents/:id": ["deleted", "Work", "deleted a document"],
  "POST /documents/:id/restore": ["changed", "Work", "restored a deleted document"],
  "POST /documents/:id": ["created", "Work", "copied a document"],
  "PUT /documents/:id/bookmark": ["created", "Work", "bookmarked a document"],
  "DELETE /documents/:id/bookmark": ["deleted", "Work", "removed a bookmark"],
  "POST /documents/:id/shares": ["shared", "Work", "shared a document"],
  "PATCH /documents/:id/shares/:share": ["changed", "Work", "changed a document share"],
  "DELETE /documents/:id/shares/:share": ["deleted", "Work", "stopped sharing a document"],
  "POST /documents/:id/branches": ["created", "Work", "created a branch of a document"],
  "PATCH /documents/:id/branches/:name": ["changed", "Work", "changed a branch of a document"],
  "DELETE /documents/:id/branches/:name": ["deleted", "Work", "deleted a branch of a document"],
  "POST /documents/:id/revisions/:hash/sheets": ["created", "Work", "created a sheet of a document"],
  "PATCH /documents/:id/revisions/:hash/sheets/:sheet": ["changed", "Work", "changed a sheet of a document"],
  "DELETE /documents/:id/revisions/:hash/sheets/:sheet": ["deleted", "Work", "deleted a sheet of a document"],
  "POST /documents/:id/revisions/:hash/columns": ["created", "Work", "created a column of a document"],
  "PATCH /documents/:id/revisions/:hash/columns/:column": ["changed", "Work", "changed a column of a document"],
  "DELETE /documents/:id/revisions/:hash/columns/:column": ["deleted", "Work", "deleted a column of a document"],
  "POST /documents/:id/revisions/:hash/clauses": ["created", "Work", "created a clause"],
  "PATCH /documents/:id/revisions/:hash/clauses/:clause": ["changed", "Work", "changed a clause"],
  "DELETE /documents/:id/revisions/:hash/clauses/:clause": ["deleted", "Work", "deleted a clause"],
  "PATCH /documents/:id/revisions/:hash/fields": ["changed", "Work", "changed cells of a document"],
  "PATCH /documents/:id/revisions/:hash": ["changed", "Work", "changed a document"],
  "POST /documents/:id/merge-requests": ["created", "Work", "created a merge request"],
  "POST /documents/:id/merge-requests/:number/merge": ["changed", "Work", "merged a merge request"],
  "POST /documents/:id/merge-requests/:number/close": ["changed", "Work", "closed a merge request"],
  "PUT /documents/:id/presence": ["other", "Work", "opened a document"],
  "POST /documents/:id/tags": ["created", "Work", "created a tag of a document"],
};

/** A changed field's name in words (status_id: status). */
export function fieldInWords(f: string): string {
  return f.replace(/_ids?$/, '').replace(/[_.]+/g, ' ').trim();
}

function list(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return words.slice(0, -1).join(', ') + ' and ' + words[words.length - 1];
}

/**
 * One entry as a sentence: "Alice Admin changed the details of Acme
 * (name and description)". {user} and {org} become the names the screen
 * knows; an action missing from the table still reads as words.
 */
export function auditSentence(
  e: { action: string; target_ids: Record<string, string>; changed_fields: string[]; details?: { count?: number; values?: Record<string, string> } },
  actor: string,
  nameOf: (id: string) => string | undefined,
  orgName: string,
  subject?: string,
): string {
  const known = auditSentences[e.action];
  let text = known ? known[2] : `made a change (${e.action.split(' ')[0].toLowerCase()})`;
  // "imported {count} assets": "imported 5 assets", "imported 1 asset", or
  // "imported assets" for an entry that did not note its count
  const count = e.details?.count;
  text = text.replace(/\{count\} (\w+?)s\b/, (_, noun: string) => (count === undefined ? `${noun}s` : count === 1 ? `1 ${noun}` : `${count} ${noun}s`));
  // "changed a project" becomes "changed the project Shed" once its name is known
  // (the route's :id is the last thing the words name: "a section of a
  // toolbox talk" names the talk)
  if (subject) {
    const re = /\ban? ([a-z][a-z ]*?)(?= (?:of|to|on|off|from|in|out) |$)/g;
    let last: RegExpExecArray | null = null;
    for (let m = re.exec(text); m; m = re.exec(text)) last = m;
    if (last) text = text.slice(0, last.index) + `the ${last[1]} ${subject}` + text.slice(last.index + last[0].length);
  }
  const user = e.target_ids.user ? nameOf(e.target_ids.user) : undefined;
  text = text.replace('{user}', user ?? 'a person').replace('{org}', orgName || 'the organisation');
  const fields = [...new Set(e.changed_fields.map(fieldInWords).filter((f) => f))];
  // New values the server noted, in words: "changed the status of the asset
  // 20kVA generator to In repair"; with more, "(status to In repair and name)".
  const values = Object.entries(e.details?.values ?? {}).map(([k, v]) => [fieldInWords(k), v] as const);
  const rest = fields.filter((f) => !values.some(([k]) => k === f));
  if (values.length === 1 && rest.length === 0 && text.startsWith('changed ')) {
    return `${actor} changed the ${values[0][0]} of ${text.slice('changed '.length)} to ${values[0][1]}`;
  }
  const parts = [...values.map(([k, v]) => `${k} to ${v}`), ...rest];
  if (parts.length > 0 && (!known || known[0] === 'changed')) text += ` (${list(parts)})`;
  return `${actor} ${text}`;
}

export function happenedOf(action: string): Happened {
  return auditSentences[action]?.[0] ?? 'other';
}
