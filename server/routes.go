package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/julienschmidt/httprouter"
)

type route struct {
	method  string
	path    string
	access  access
	handler handlerFunc
}

// routes is the whole API in one table.
func (s *Server) routes() []route {
	return []route{
		{"GET", "/healthz", public, s.healthz},
		{"GET", "/readyz", public, s.readyz},
		{"GET", "/openapi.json", public, s.openAPI}, // the API description (openapi.yaml)
		{"GET", "/organisations/:id/audit-log", org(ManageOrganisation), s.auditLog},
		{"GET", "/organisations/:id/audit-log/export", org(ManageOrganisation), s.auditExport},

		// The web app (web/dist, docs/web.md); / sends a browser to it.
		{"GET", "/", public, s.appRoot},
		{"GET", "/app", public, s.appRoot},
		{"GET", "/app/*path", public, s.appServe},
		{"GET", "/favicon.ico", public, s.appFavicon},

		// Sign-in: the server is its own OpenID provider.
		{"POST", "/auth/register", public, s.register},
		{"GET", "/oauth/authorize", public, s.authorizeGet},
		{"POST", "/oauth/authorize", public, s.authorizePost},
		{"GET", "/auth/forgot", public, s.forgotGet},
		{"POST", "/auth/forgot", public, s.forgotPost},
		{"GET", "/auth/reset", public, s.resetGet},
		{"POST", "/auth/reset", public, s.resetPost},
		{"POST", "/oauth/token", public, s.token},
		{"POST", "/oauth/revoke", public, s.revoke},
		{"GET", "/.well-known/openid-configuration", public, s.discovery},
		{"GET", "/.well-known/jwks.json", public, s.jwks},
		{"GET", "/oauth/userinfo", self, s.userinfo},
		{"GET", "/admin/outbox", staff, s.outboxList},
		{"POST", "/admin/users/:id/password-reset", staff, s.adminPasswordReset},

		// Users
		{"GET", "/users/@me", self, s.userMe},
		{"PATCH", "/users/@me", self, s.userPatchMe},
		{"DELETE", "/users/@me", self, s.userDeleteMe},
		{"GET", userByIDPath + ":id", anyUser("any signed-in user; the answer shows what the organisations the two share allow"), s.userGet},
		{"GET", "/users/lookup", anyUser("any signed-in user; the answer shows what the organisations the two share allow"), s.userLookup},
		{"GET", "/users/avatar/:hash", public, s.avatarGet},
		{"POST", "/users/@me/verify-phone-number", self, s.userVerifyPhone},
		{"GET", "/users/@me/emails", self, s.userEmailList},
		{"POST", "/users/@me/emails", self, s.userEmailCreate},
		{"GET", "/users/@me/emails/:id", self, s.userEmailGet},
		{"PATCH", "/users/@me/emails/:id", self, s.userEmailPatch},
		{"DELETE", "/users/@me/emails/:id", self, s.userEmailDelete},
		{"POST", "/users/@me/emails/:id/verify", self, s.userEmailResend},
		{"PATCH", "/users/@me/organisations/:id/email", orgMember, s.userOrgEmailPatch},
		{"DELETE", "/users/@me/organisations/:id", leaving, s.userLeaveOrganisation},
		{"PUT", "/users/@me/qr/token", self, s.userQRToken},
		{"POST", "/users/@me/qr/scan", self, s.userQRScan},
		{"GET", "/users/@me/document-shares", self, s.userDocumentShares},
		{"POST", "/users/@me/document-shares/:id/accept", anyUser("the recipient of the share"), s.documentShareRespond(true)},
		{"POST", "/users/@me/document-shares/:id/reject", anyUser("the recipient of the share"), s.documentShareRespond(false)},
		{"GET", "/users/@me/work-items", self, s.userWorkItems},
		{"GET", "/users/@me/notifications", self, s.notificationList},
		{"PATCH", "/users/@me/notifications/:id", self, s.notificationPatch},
		{"POST", "/users/@me/notifications/read-all", self, s.notificationReadAll},
		{"GET", "/users/@me/for-you", self, s.forYou},
		{"GET", "/users/@me/fleets", self, s.userFleets},
		{"GET", "/users/@me/shares", self, s.userShares},
		{"GET", "/users/@me/fleet-shares", self, s.userFleetShares},
		{"GET", "/users/@me/project-shares", self, s.userProjectShares},
		{"POST", "/users/@me/project-shares/:id/accept", anyUser("the recipient of the share"), s.projectShareRespond(true)},
		{"POST", "/users/@me/project-shares/:id/reject", anyUser("the recipient of the share"), s.projectShareRespond(false)},
		{"POST", "/users/@me/fleet-shares/:id/accept", anyUser("the recipient of the share"), s.fleetShareRespond(true)},
		{"POST", "/users/@me/fleet-shares/:id/reject", anyUser("the recipient of the share"), s.fleetShareRespond(false)},
		{"GET", "/users/@me/fleets/:id/subscriptions", fleetSubscriber, s.userFleetSubscriptions},
		{"POST", "/users/@me/fleets/:id/subscriptions", fleetSubscriber, s.userFleetSubscriptionCreate},
		{"PATCH", "/users/@me/fleets/:id/subscriptions/:subscription", fleetSubscriber, s.userFleetSubscriptionPatch},
		{"DELETE", "/users/@me/fleets/:id/subscriptions/:subscription", self, s.userFleetSubscriptionDelete},
		{"GET", "/users/@me/work-items/:id/subscriptions", workItem(0).or("VIEW_WORKITEMS, or an assignee or invitee"), s.userWorkItemSubscriptions},
		{"GET", "/users/@me/toolboxes/:id", toolboxOpening, s.userToolboxGet},
		{"POST", "/users/@me/toolboxes/:id/sign", s.toolboxSigning(), s.userToolboxSign},
		{"GET", "/users/@me/witness/:id", witnessing, s.userWitnessGet},
		{"POST", "/users/@me/witness/:id/sign", witnessing, s.userWitnessSign},
		{"GET", "/users/@me/inductions", self, s.userInductions},
		{"GET", "/users/@me/inductions/:id", assignedInduction, s.userInductionGet},
		{"POST", "/organisations/:id/inductions", org(ManageInductions), s.inductionCreate},
		{"GET", "/organisations/:id/inductions", org(0), s.inductionList},
		{"GET", "/inductions/:id", induction(0), s.inductionGet},
		{"PATCH", "/inductions/:id", induction(ManageInductions), s.inductionPatch},
		{"GET", "/inductions/:id/revisions", induction(0), s.inductionRevisions},
		{"GET", "/inductions/:id/revisions/:hash", induction(0), s.inductionRevision},
		{"GET", "/inductions/:id/attachments/:hash", induction(0), s.inductionAttachment},
		{"POST", "/inductions/:id/users/:user", inductionSelf, s.inductionAssign},
		{"DELETE", "/inductions/:id/users/:user", inductionSelf, s.inductionUnassign},
		{"GET", "/inductions/:id/users/:user", induction(ManageInductions), s.inductionUser},
		{"GET", "/inductions/:id/users", induction(ManageInductions), s.inductionUsers},
		{"POST", "/users/@me/inductions/:id/records", assignedInduction, s.userInductionComplete},
		{"GET", "/inductions/:id/revisions/:hash/records", induction(ManageInductions), s.inductionRecords},
		{"GET", "/inductions/:id/revisions/:hash/records/export-csv", induction(ManageInductions), s.inductionRecordsCSV},
		{"GET", "/inductions/:id/revisions/:hash/records/export-xlsx", induction(ManageInductions), s.inductionRecordsXLSX},
		{"GET", "/induction-records/:id", inductionRecord(ManageInductions), s.inductionRecordGet},

		// Toolboxes, their sections, topics and signatures, and schedules
		{"POST", "/organisations/:id/toolboxes", org(0), s.toolboxCreate},
		{"GET", "/organisations/:id/toolboxes", org(0), s.toolboxList},
		{"GET", "/toolboxes/:id", toolbox(0), s.toolboxGet},
		{"PATCH", "/toolboxes/:id", toolbox(0), s.toolboxPatch},
		{"POST", "/toolboxes/:id/conduct", toolbox(0), s.toolboxConduct},
		{"POST", "/toolboxes/:id/archive", toolbox(0), s.toolboxArchive},
		{"POST", "/toolboxes/:id/unarchive", toolbox(0), s.toolboxUnarchive},
		{"POST", "/toolboxes/:id/sections", toolbox(0), s.sectionCreate},
		{"GET", "/toolboxes/:id/sections/:section", toolbox(0), s.sectionGet},
		{"PATCH", "/toolboxes/:id/sections/:section", toolbox(0), s.sectionPatch},
		{"DELETE", "/toolboxes/:id/sections/:section", toolbox(0), s.sectionDelete},
		{"POST", "/toolboxes/:id/topics", toolbox(0), s.topicCreate},
		{"GET", "/toolboxes/:id/topics/:topic", toolbox(0), s.topicGet},
		{"PATCH", "/toolboxes/:id/topics/:topic", toolbox(0), s.topicPatch},
		{"DELETE", "/toolboxes/:id/topics/:topic", toolbox(0), s.topicDelete},
		{"POST", "/toolboxes/:id/sign", toolbox(0), s.toolboxSign},
		{"GET", "/toolboxes/:id/report", toolbox(0), s.toolboxReport},
		{"POST", "/toolboxes/:id/schedules", toolbox(ManageTeams), s.toolboxScheduleCreate},
		{"POST", "/organisations/:id/schedules", org(ManageTeams), s.scheduleCreate},
		{"GET", "/schedules/:id", schedule(0), s.scheduleGet},
		{"PATCH", "/schedules/:id", scheduleWriting, s.schedulePatch},
		{"DELETE", "/schedules/:id", scheduleWriting, s.scheduleDelete},
		{"PUT", "/schedules/:id/invitees/:user", scheduleWriting, s.scheduleInviteePut},
		{"DELETE", "/schedules/:id/invitees/:user", scheduleWriting, s.scheduleInviteeDelete},
		{"POST", "/schedules/:id/check-in", inviteeMoving, s.scheduleCheckIn},
		{"POST", "/schedules/:id/decline", inviteeMoving, s.scheduleDecline},

		// Organisations, members, bans, domains
		{"POST", "/organisations", anyUser("any signed-in user, who becomes its owner"), s.organisationCreate},
		{"GET", "/organisations/:id", org(0), s.organisationGet},
		{"PATCH", "/organisations/:id", org(ManageOrganisation), s.organisationPatch},
		{"DELETE", "/organisations/:id", orgOwner, s.organisationDelete},
		{"GET", "/organisations/:id/members", org(0), s.memberList},
		{"GET", "/organisations/:id/members/:user", org(0), s.memberGet},
		{"GET", "/organisations/:id/members/:user/access", org(0).whole("MANAGE_ROLES, or the member themself", selfOr("user", ManageRoles)), s.memberAccess},
		{"PATCH", "/organisations/:id/members/:user", org(ManageOrganisation), s.memberPatch},
		{"DELETE", "/organisations/:id/members/:user", org(ManageOrganisation), s.memberDelete},
		{"GET", "/organisations/:id/bans", org(ManageOrganisation), s.banList},
		{"PUT", "/organisations/:id/bans/:user", org(ManageOrganisation), s.banPut},
		{"DELETE", "/organisations/:id/bans/:user", org(ManageOrganisation), s.banDelete},
		// Offline site sync (sync.go): pairing, paired nodes, status.
		{"POST", "/organisations/:id/sync/pairing-codes", org(ManageOrganisation), s.syncPairingCodeCreate},
		{"GET", "/organisations/:id/sync/nodes", org(ManageOrganisation), s.syncNodeList},
		{"DELETE", "/organisations/:id/sync/nodes/:node", org(ManageOrganisation), s.syncNodeRevoke},
		{"GET", "/organisations/:id/sync/status", org(ManageOrganisation), s.syncStatus},
		// The Sync screen (syncscreen.go): Sync now on a laptop, and its progress.
		{"POST", "/organisations/:id/sync/now", org(ManageOrganisation), s.syncNowStart},
		{"GET", "/organisations/:id/sync/now", org(ManageOrganisation), s.syncNowGet},
		{"GET", "/organisations/:id/sync/merge-requests", org(ManageOrganisation), s.syncMergeRequestList},
		// A node's own requests: the pairing code, then its signature.
		{"POST", "/sync/pair", syncPairing, s.syncPair},
		{"GET", "/sync/clone", syncNodeAccess, s.syncClone},
		{"POST", "/sync/exchange", syncNodeAccess, s.syncExchangeHandler},
		{"POST", "/sync/objects/missing", syncNodeAccess, s.syncObjectsMissing},
		{"PUT", "/sync/objects/:kind/:hash", syncNodeAccess, s.syncObjectPut},
		{"GET", "/sync/objects/:kind/:hash", syncNodeAccess, s.syncObjectGet},
		{"POST", "/organisations/:id/domains", org(ManageOrganisation), s.domainCreate},
		{"GET", "/organisations/:id/domains", org(ManageOrganisation), s.domainList},
		{"PATCH", "/organisations/:id/domains/:domain", org(ManageOrganisation), s.domainPatch},
		{"DELETE", "/organisations/:id/domains/:domain", org(ManageOrganisation), s.domainDelete},
		{"GET", "/organisations/:id/sync-conflicts", org(ManageOrganisation), s.syncConflictList},
		{"POST", "/organisations/:id/sync-conflicts/:conflict/settle", org(ManageOrganisation), s.syncConflictSettle},
		{"POST", "/organisations/:id/sync-conflicts/:conflict/undo", orgOwnerUndo, s.syncConflictUndo},
		{"POST", "/organisations/:id/domains/:domain/verify", org(ManageOrganisation), s.domainVerify},
		{"GET", "/users/@me/organisations", self, s.myOrganisations},
		{"PUT", "/organisations/:id/icon", org(ManageOrganisation), s.orgImagePut("icon")},
		{"DELETE", "/organisations/:id/icon", org(ManageOrganisation), s.orgImageDelete("icon")},
		{"PUT", "/organisations/:id/banner", org(ManageOrganisation), s.orgImagePut("banner")},
		{"DELETE", "/organisations/:id/banner", org(ManageOrganisation), s.orgImageDelete("banner")},
		{"PUT", "/organisations/:id/logo", org(ManageOrganisation), s.orgImagePut("logo")},
		{"DELETE", "/organisations/:id/logo", org(ManageOrganisation), s.orgImageDelete("logo")},
		{"GET", orgImagesPath + ":hash", public, s.orgImageGet},
		{"PATCH", "/admin/organisations/:id", staff, s.adminOrganisationPatch},

		// Workgroups and teams
		{"POST", "/organisations/:id/workgroups", org(ManageWorkgroups), s.workgroupCreate},
		{"GET", "/organisations/:id/workgroups", org(0), s.workgroupList},
		{"GET", "/workgroups/:id", workgroup(0), s.workgroupGet},
		{"PATCH", "/workgroups/:id", workgroup(ManageWorkgroups), s.workgroupPatch},
		{"DELETE", "/workgroups/:id", workgroup(ManageWorkgroups), s.workgroupDelete},
		{"GET", "/workgroups/:id/teams", workgroup(0), s.teamList},
		{"POST", "/workgroups/:id/teams", workgroup(ManageTeams), s.teamCreate},
		{"PUT", "/workgroups/:id/teams/:team/members/:user", teamManaging, s.teamMemberAdd},
		{"PATCH", "/workgroups/:id/teams/:team/members/:user", teamManaging, s.teamMemberPatch},
		{"DELETE", "/workgroups/:id/teams/:team/members/:user", teamManaging, s.teamMemberRemove},
		{"GET", "/team/:id", team(0), s.teamGet},
		{"PATCH", "/team/:id", team(ManageTeams), s.teamPatch},
		{"DELETE", "/team/:id", team(ManageTeams), s.teamDelete},
		{"GET", "/team/:id/members", team(0), s.teamMembers},

		// Systems and prefixes
		{"POST", "/organisations/:id/systems", org(ManageSystems), s.systemCreate},
		{"GET", "/organisations/:id/systems", orgListing, s.systemList},
		{"GET", "/systems/:id", system(0), s.systemGet},
		{"PATCH", "/systems/:id", system(ManageSystems), s.systemPatch},
		{"GET", "/systems/:id/subsystems", system(0), s.systemSubsystems},
		{"POST", "/organisations/:id/prefixes", org(ManageOrganisation), s.prefixCreate},
		{"GET", "/organisations/:id/prefixes", org(0), s.prefixList},
		{"GET", "/api/prefixes/:id", prefix(0), s.prefixGet},
		{"PATCH", "/api/prefixes/:id", prefix(ManageOrganisation), s.prefixPatch},
		{"DELETE", "/api/prefixes/:id", prefix(ManageOrganisation), s.prefixDelete},

		// Locations and disciplines
		{"POST", "/organisations/:id/locations", org(ManageLocations), s.locationCreate},
		{"GET", "/organisations/:id/locations", orgListing, s.locationList},
		{"GET", "/locations/:id", location(0), s.locationGet},
		{"PATCH", "/locations/:id", location(ManageLocations), s.locationPatch},
		{"POST", "/locations/:id/sub-locations", location(ManageLocations), s.subLocationCreate},
		{"PATCH", "/sub-locations/:id", subLocation(ManageLocations), s.subLocationPatch},
		{"GET", "/locations/:id/sub-locations", decidedBy("location", "member, or the recipient of a share of a fleet there"), s.subLocationList},
		{"GET", "/locations/:id/inductions", location(0), s.locationInductionList},
		{"PUT", "/locations/:id/inductions/:induction", location(ManageLocations), s.locationInductionPut},
		{"DELETE", "/locations/:id/inductions/:induction", location(ManageLocations), s.locationInductionDelete},
		{"POST", "/organisations/:id/disciplines", org(ManageOrganisation), s.disciplineCreate},
		{"GET", "/organisations/:id/disciplines", org(0), s.disciplineList},
		{"GET", "/api/disciplines/:id", discipline(0), s.disciplineGet},
		{"PATCH", "/api/disciplines/:id", discipline(ManageOrganisation), s.disciplinePatch},

		// Work item types and work items
		{"POST", "/organisations/:id/work-item-types", org(ManageOrganisation), s.workItemTypeCreate},
		{"GET", "/organisations/:id/work-item-types", org(0), s.workItemTypeList},
		{"GET", "/work-item-types/:id", workItemType(0), s.workItemTypeGet},
		{"PATCH", "/work-item-types/:id", workItemType(ManageOrganisation), s.workItemTypePatch},
		{"POST", "/organisations/:id/workitems", workItemCreating, s.workItemCreate},
		{"GET", "/organisations/:id/workitems", org(0), s.workItemList},
		{"GET", "/organisations/:id/workitems/export.csv", org(0), s.workItemExportCSV},
		{"GET", "/organisations/:id/workitems/export.xlsx", org(0), s.workItemExportXLSX},
		{"GET", "/workitems/:id", workItem(0).or("VIEW_WORKITEMS, or an assignee or invitee"), s.workItemGet},
		{"PATCH", "/workitems/:id", workItem(CreateWorkitems), s.workItemPatch},
		{"POST", "/workitems/:id/schedules", workItem(CreateWorkitems), s.workItemScheduleCreate},
		{"PUT", "/workitems/:id/subscription", workItemViewing, s.workItemSubscribe},
		{"DELETE", "/workitems/:id/subscription", workItem(0), s.workItemUnsubscribe},
		{"GET", "/workitems/:id/witnesses", workItem(0).or("VIEW_WORKITEMS, or an assignee or invitee"), s.workItemWitnesses},

		// Integrations and their webhook deliveries
		{"POST", "/organisations/:id/integrations", org(ManageOrganisation), s.integrationCreate},
		{"GET", "/organisations/:id/integrations", org(ManageOrganisation), s.integrationList},
		{"GET", "/integrations/:id", integration(ManageOrganisation), s.integrationGet},
		{"PATCH", "/integrations/:id", integration(ManageOrganisation), s.integrationPatch},
		{"POST", "/integrations/:id/sync", integration(ManageOrganisation), s.integrationSync},
		{"GET", "/integrations/:id/deliveries", integration(ManageOrganisation), s.integrationDeliveries},

		// Roles and permission grants
		{"GET", "/organisations/:id/roles", org(0), s.roleList},
		{"POST", "/organisations/:id/roles", org(ManageRoles), s.roleCreate},
		{"PATCH", "/organisations/:id/roles", org(ManageRoles), s.roleReorder},
		{"PUT", "/organisations/:id/members/:user/roles/:role", org(ManageRoles), s.memberRoleChange(true)},
		{"DELETE", "/organisations/:id/members/:user/roles/:role", org(ManageRoles), s.memberRoleChange(false)},
		{"GET", "/organisations/:id/permissions", org(ManageOrganisation), s.orgGrantList},
		{"PUT", "/organisations/:id/permissions/:target", org(ManageRoles), s.grantPut},
		{"GET", "/roles/:id", role(0), s.roleGet},
		{"PATCH", "/roles/:id", roleOutranking, s.rolePatch},
		{"DELETE", "/roles/:id", roleOutranking, s.roleDelete},
		{"GET", "/roles/:id/members", role(0), s.roleMembers},

		// Invites
		{"POST", "/organisations/:id/invites", org(CreateInvite), s.inviteCreate},
		{"GET", "/organisations/:id/invites", org(CreateInvite), s.inviteList},
		{"GET", "/invites/:code", anyUser("anyone signed in who holds the invite's code"), s.inviteGet},
		{"PATCH", "/invites/:code", invite(CreateInvite), s.invitePatch},
		{"POST", "/invites/:code", anyUser("anyone signed in who holds the invite's code; the invite decides who may join"), s.inviteUse},
		{"DELETE", "/invites/:code", invite(RevokeInvite), s.inviteRevoke},

		// Fleets and the asset catalogue (docs/assets.md)
		{"POST", "/organisations/:id/fleets", org(ManageFleets), s.fleetCreate},
		{"GET", "/organisations/:id/fleets", org(0), s.fleetList},
		{"GET", "/fleets/:id", fleet(0), s.fleetGet},
		{"PATCH", "/fleets/:id", fleet(ManageFleets), s.fleetPatch},
		{"DELETE", "/fleets/:id", fleet(ManageFleets), s.fleetDelete},
		{"GET", "/fleets/:id/permissions", fleet(ManageFleets), s.fleetGrantList},
		{"PATCH", "/fleets/:id/permissions/:roleId", fleet(ManageFleets), s.fleetGrantPatch},
		{"POST", "/fleets/:id/shares", fleet(ManageFleets), s.fleetShareCreate},
		{"GET", "/fleets/:id/shares", fleet(ManageFleets), s.fleetShareList},
		{"DELETE", "/fleets/:id/shares/:share", fleet(ManageFleets), s.fleetShareRevoke},
		{"POST", "/organisations/:id/asset-statuses", org(ManageFleets), s.assetStatusCreate},
		{"GET", "/organisations/:id/asset-statuses", org(0), s.assetStatusList},
		{"GET", "/api/assetstatuses/:id", assetStatus(0), s.assetStatusGet},
		{"PATCH", "/api/assetstatuses/:id", assetStatus(0), s.assetStatusPatch},
		{"DELETE", "/api/assetstatuses/:id", assetStatus(ManageFleets), s.assetStatusDelete},
		{"POST", "/organisations/:id/asset-zones", org(ManageFleets), s.assetZoneCreate},
		{"GET", "/organisations/:id/asset-zones", org(0), s.assetZoneList},
		{"GET", "/api/assetzones/:id", assetZone(0), s.assetZoneGet},
		{"PATCH", "/api/assetzones/:id", assetZone(ManageFleets), s.assetZonePatch},
		{"DELETE", "/api/assetzones/:id", assetZone(ManageFleets), s.assetZoneDelete},
		{"POST", "/organisations/:id/asset-fields", org(ManageFleets), s.assetFieldCreate},
		{"GET", "/organisations/:id/asset-fields", org(0), s.assetFieldList},
		{"GET", "/api/assetfields/:id", assetField(0), s.assetFieldGet},
		{"PATCH", "/api/assetfields/:id", assetField(ManageFleets), s.assetFieldPatch},
		{"DELETE", "/api/assetfields/:id", assetField(ManageFleets), s.assetFieldDelete},
		{"POST", "/organisations/:id/asset-types", org(ManageFleets), s.assetTypeCreate},
		{"GET", "/organisations/:id/asset-types", org(0), s.assetTypeList},
		{"GET", "/api/assettype/:id", assetType(0), s.assetTypeGet},
		{"PATCH", "/api/assettype/:id", assetType(ManageFleets), s.assetTypePatch},
		{"DELETE", "/api/assettype/:id", assetType(ManageFleets), s.assetTypeDelete},
		{"PUT", "/api/assettype/:id/asset-fields/:fieldId", assetType(ManageFleets), s.assetTypeAttach(false, true)},
		{"DELETE", "/api/assettype/:id/asset-fields/:fieldId", assetType(ManageFleets), s.assetTypeAttach(false, false)},
		{"PUT", "/api/assettype/:id/asset-zones/:zoneId", assetType(ManageFleets), s.assetTypeAttach(true, true)},
		{"DELETE", "/api/assettype/:id/asset-zones/:zoneId", assetType(ManageFleets), s.assetTypeAttach(true, false)},
		{"POST", "/organisations/:id/asset-subscriptions", org(ManageFleets), s.assetSubscriptionCreate},
		{"GET", "/organisations/:id/asset-subscriptions", org(ManageFleets), s.assetSubscriptionList},
		{"GET", "/asset-subscriptions/:id", assetSubscription(ManageFleets), s.assetSubscriptionGet},
		{"PATCH", "/asset-subscriptions/:id", assetSubscription(ManageFleets), s.assetSubscriptionPatch},
		{"POST", "/organisations/:id/assets", assetCreating, s.assetCreate},
		{"GET", "/organisations/:id/assets", orgListing, s.groupList(true)},
		{"POST", "/organisations/:id/assets/import", org(ManageFleets), s.assetImport},
		{"GET", "/organisations/:id/assets/export.csv", org(0), s.assetExportCSV},
		{"GET", "/organisations/:id/assets/export.xlsx", org(0), s.assetExportXLSX},
		{"GET", "/api/assets/:id", decidedBy("asset", "member, or the recipient of a share of its fleet"), s.assetGet},
		{"PATCH", "/api/assets/:id", asset(ManageFleets).or("and on the fleet it moves to"), s.assetPatch},
		{"PATCH", "/api/assets/:id/fields", asset(ManageFleets).or("and on the fleet it moves to"), s.assetPatch},
		{"POST", "/organisations/:id/asset-groups", groupCreating, s.assetGroupCreate},
		{"GET", "/organisations/:id/asset-groups", orgListing, s.groupList(false)},
		{"GET", "/api/assetgroups/:id", decidedBy("asset group", "member, or the recipient of a share of its fleet"), s.assetGroupGet},
		{"PATCH", "/api/assetgroups/:id", assetGroup(ManageFleets).or("and on the fleet it moves to"), s.assetGroupPatch},
		{"DELETE", "/api/assetgroups/:id", assetGroup(ManageFleets), s.assetGroupDelete},
		{"PATCH", "/api/assetgroups/:id/fields", assetGroup(ManageFleets).or("and on the fleet it moves to"), s.assetGroupPatch},
		{"PUT", "/api/assetgroups/:id/assets/:assetId", assetGroup(0), s.assetGroupMember("PUT")},
		{"PATCH", "/api/assetgroups/:id/assets/:assetId", assetGroup(0), s.assetGroupMember("PATCH")},
		{"DELETE", "/api/assetgroups/:id/assets/:assetId", assetGroup(0), s.assetGroupMember("DELETE")},
		{"POST", "/api/assetgroups/:id/logs", assetGroup(0), s.assetLogCreate},
		{"GET", "/api/assetgroups/:id/logs", assetGroup(0), s.assetLogList},
		{"GET", "/api/assetlogs/:id", assetLog(0), s.assetLogGet},
		{"PATCH", "/api/assetlogs/:id", assetLogAuthor, s.assetLogPatch},
		{"DELETE", "/api/assetlogs/:id", assetLogAuthor, s.assetLogDelete},
		{"PUT", "/api/assetlogs/:id/attachment", assetLogAuthor, s.assetLogAttachmentPut},
		{"GET", "/api/assetlogs/:id/attachment", assetLog(0), s.assetLogAttachmentGet},

		// Projects, milestones, packages
		{"POST", "/organisations/:id/projects", org(CreateProjects), s.projectCreate},
		{"GET", "/organisations/:id/projects", org(0), s.projectList},
		{"GET", "/projects/:id", project(ViewProjects), s.projectGet},
		{"PATCH", "/projects/:id", project(AdminProjects), s.projectPatch},
		{"PATCH", "/projects/:id/permissions/:roleId", project(AdminProjects), s.projectGrantPatch},
		{"GET", "/projects/:id/permissions", project(AdminProjects), s.projectGrantList},
		{"POST", "/projects/:id/shares", project(ShareProjects), s.projectShareCreate},
		{"GET", "/projects/:id/shares", project(ShareProjects), s.projectShareList},
		{"DELETE", "/projects/:id/shares/:share", project(ShareProjects), s.projectShareRevoke},
		{"POST", "/projects/:id/milestones", project(AdminProjects), s.milestoneCreate},
		{"GET", "/projects/:id/milestones", project(ViewProjects), s.milestoneList},
		{"GET", "/milestones/:id", milestone(ViewProjects), s.milestoneGet},
		{"PATCH", "/milestones/:id", milestone(AdminProjects), s.milestonePatch},
		{"POST", "/projects/:id/packages", project(AdminProjects), s.packageCreate},
		{"GET", "/projects/:id/packages", project(ViewProjects), s.packageList},
		{"GET", "/packages/:id", projectPackage(ViewProjects), s.packageGet},
		{"PATCH", "/packages/:id", projectPackage(AdminProjects), s.packagePatch},
		{"PATCH", "/packages/:id/permissions/:roleId", projectPackage(AdminProjects), s.packageGrantPatch},
		{"GET", "/packages/:id/permissions", projectPackage(AdminProjects), s.packageGrantList},

		// Documents: types, item fields, documents, content (docs/documents.md)
		{"POST", "/organisations/:id/document-types", org(ManageOrganisation), s.documentTypeCreate},
		{"GET", "/organisations/:id/document-types", org(0), s.documentTypeList},
		{"GET", "/document-types/:id", documentType(0), s.documentTypeGet},
		{"PATCH", "/document-types/:id", documentType(ManageOrganisation), s.documentTypePatch},
		{"DELETE", "/document-types/:id", documentType(ManageOrganisation), s.documentTypeDelete},
		{"POST", "/organisations/:id/document-fields", org(ManageOrganisation), s.documentFieldCreate},
		{"GET", "/organisations/:id/document-fields", org(0), s.documentFieldList},
		{"GET", "/document-fields/:id", documentField(0), s.documentFieldGet},
		{"PATCH", "/document-fields/:id", documentField(ManageOrganisation), s.documentFieldPatch},
		{"POST", "/documents", documentCreating, s.documentCreate},
		{"GET", "/organisations/:id/documents", org(0), s.documentList},
		{"GET", "/documents/:id", doc(ViewDocuments), s.documentGet},
		{"PATCH", "/documents/:id", doc(EditDocuments), s.documentPatch},
		{"DELETE", "/documents/:id", doc(EditDocuments), s.documentDelete},
		{"POST", "/documents/:id/restore", doc(0), s.documentRestore},
		{"POST", "/documents/:id", doc(EditDocuments), s.documentFork},
		{"PUT", "/documents/:id/bookmark", doc(0), s.bookmarkPut},
		{"DELETE", "/documents/:id/bookmark", doc(0), s.bookmarkDelete},
		{"GET", "/documents/:id/shares", docSharing, s.documentShareList},
		{"POST", "/documents/:id/shares", docSharing, s.documentShareCreate},
		{"PATCH", "/documents/:id/shares/:share", docSharing, s.documentSharePatch},
		{"DELETE", "/documents/:id/shares/:share", docSharing, s.documentShareRevoke},
		{"GET", "/documents/:id/branches", doc(ViewDocuments), s.branchList},
		{"POST", "/documents/:id/branches", doc(EditDocuments), s.branchCreate},
		{"GET", "/documents/:id/branches/:name", doc(ViewDocuments), s.branchGet},
		{"PATCH", "/documents/:id/branches/:name", doc(EditDocuments), s.branchPatch},
		{"DELETE", "/documents/:id/branches/:name", doc(0), s.branchDelete},
		{"GET", "/documents/:id/revisions", doc(ViewDocuments), s.revisionList},
		{"GET", "/documents/:id/revisions/:hash", doc(ViewDocuments), s.revisionGet},
		{"GET", "/documents/:id/revisions/:hash/diff/:other", doc(ViewDocuments), s.revisionDiff},
		{"GET", "/documents/:id/revisions/:hash/sheets", doc(ViewDocuments), s.sheetList},
		{"POST", "/documents/:id/revisions/:hash/sheets", doc(EditDocuments), s.sheetCreate},
		{"PATCH", "/documents/:id/revisions/:hash/sheets/:sheet", doc(EditDocuments), s.sheetPatch},
		{"DELETE", "/documents/:id/revisions/:hash/sheets/:sheet", doc(EditDocuments), s.sheetDelete},
		{"GET", "/documents/:id/revisions/:hash/columns", doc(ViewDocuments), s.columnList},
		{"POST", "/documents/:id/revisions/:hash/columns", doc(EditDocuments), s.columnCreate},
		{"PATCH", "/documents/:id/revisions/:hash/columns/:column", doc(EditDocuments), s.columnPatch},
		{"DELETE", "/documents/:id/revisions/:hash/columns/:column", doc(EditDocuments), s.columnDelete},
		{"GET", "/documents/:id/revisions/:hash/clauses", doc(ViewDocuments), s.clauseList},
		{"POST", "/documents/:id/revisions/:hash/clauses", doc(EditDocuments), s.clauseCreate},
		{"PATCH", "/documents/:id/revisions/:hash/clauses/:clause", doc(EditDocuments), s.clausePatch},
		{"DELETE", "/documents/:id/revisions/:hash/clauses/:clause", doc(EditDocuments), s.clauseDelete},
		{"PATCH", "/documents/:id/revisions/:hash/fields", doc(EditDocuments), s.fieldUpdate},
		// Exports and clause numbering (server/documentexports.go)
		{"PATCH", "/documents/:id/revisions/:hash", doc(EditDocuments), s.revisionPatch},
		{"GET", "/documents/:id/revisions/:hash/export.docx", doc(ViewDocuments), s.exportDOCX},
		{"GET", "/documents/:id/revisions/:hash/export.xlsx", doc(ViewDocuments), s.exportXLSX},
		// Merge requests (documentmergerequests.go)
		{"POST", "/documents/:id/merge-requests", doc(EditDocuments), s.mergeRequestCreate},
		{"GET", "/documents/:id/merge-requests", doc(ViewDocuments), s.mergeRequestList},
		{"GET", "/documents/:id/merge-requests/:number", doc(ViewDocuments), s.mergeRequestGet},
		{"POST", "/documents/:id/merge-requests/:number/merge", doc(EditDocuments), s.mergeRequestMerge},
		{"POST", "/documents/:id/merge-requests/:number/close", doc(EditDocuments), s.mergeRequestClose},
		// Presence (server/documentpresence.go)
		{"PUT", "/documents/:id/presence", doc(ViewDocuments), s.presencePut},
		{"GET", "/documents/:id/presence", doc(ViewDocuments), s.presenceList},
		{"GET", "/documents/:id/presence/stream", doc(ViewDocuments), s.presenceStream},
		// Tags and release labels (documenttags.go)
		{"POST", "/documents/:id/tags", doc(EditDocuments), s.tagCreate},
		{"GET", "/documents/:id/tags", doc(ViewDocuments), s.tagList},
	}
}

// userByIDPath is where GET /users/{id} is routed: httprouter cannot hold a
// wildcard beside the static /users/@me, /users/lookup and /users/avatar.
const userByIDPath = "/internal/users-by-id/"

// rewriteUserPath sends single-segment /users/<id> requests to userByIDPath.
func rewriteUserPath(r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/users/")
	if !ok || rest == "" || strings.Contains(rest, "/") || rest == "@me" || rest == "lookup" {
		return
	}
	r.URL.Path = userByIDPath + rest
	r.URL.RawPath = ""
}

// rewriteBranchPath lets a branch name hold slashes (an exchange names a
// site's branch site/<node>/<branch>): the client escapes them (%2F), but
// the router sees the decoded path, where they split the name into
// segments no route has. Everything after /branches/ is the name: it is
// routed escaped as one segment and unescaped by branchByPath.
func rewriteBranchPath(r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/documents/")
	if !ok {
		return
	}
	id, name, ok := strings.Cut(rest, "/branches/")
	if !ok || id == "" || strings.Contains(id, "/") || name == "" {
		return
	}
	r.URL.Path = "/documents/" + id + "/branches/" + url.PathEscape(name)
	r.URL.RawPath = ""
}

func (s *Server) buildRouter() *httprouter.Router {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false
	rt.RedirectFixedPath = false
	rt.HandleMethodNotAllowed = true
	for _, r := range s.routes() {
		rt.Handle(r.method, r.path, s.handle(r.method+" "+r.path, r.access, r.handler))
	}
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, notFound("No such path."))
	})
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, errorf(http.StatusMethodNotAllowed, "Method %s is not allowed here.", r.Method))
	})
	rt.PanicHandler = func(w http.ResponseWriter, r *http.Request, p any) {
		panic(p) // recovered, logged and answered in ServeHTTP
	}
	return rt
}

func (s *Server) healthz(rq *request) error {
	if err := s.store.Reader.PingContext(rq.ctx); err != nil {
		return err
	}
	return rq.json(http.StatusOK, map[string]string{"status": "ok"})
}
