package db

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// The sync policy catalogue (docs/sync.md, ../shared/design/sync.md): every
// table declares whether it travels between nodes and how. A table that
// declares nothing fails TestSyncCatalogueCoversSchema, so a migration that
// adds a table must name its policy here.

// SyncPolicy says whether a table's rows leave the node.
type SyncPolicy uint8

const (
	// Local rows never leave the node: tokens, keys, mail queues, the log.
	Local SyncPolicy = iota + 1
	// Derived rows are recomputed on each node from replicated rows (by
	// the triggers that keep them, and by Rebuild after applying changes):
	// never shipped.
	Derived
	// Replicated rows travel, merged by the table's Rule.
	Replicated
)

// MergeRule is how concurrent changes of a replicated table are merged.
type MergeRule uint8

const (
	// RulePlain: per column, the later clock wins, ties by node id; a
	// delete is a tombstone that wins over a concurrent edit.
	RulePlain MergeRule = iota + 1
	// RuleUnique: plain, and a unique key (a code, a domain) two nodes
	// created offline is kept twice, the later renamed, with a conflict
	// for a person to settle.
	RuleUnique
	// RuleSecurity: memberships, roles, grants, bans, invites, shares:
	// fail closed (a concurrent removal, ban, revoke or deny wins).
	RuleSecurity
	// RuleEvidence: append-only union, never edited by sync.
	RuleEvidence
	// RuleAudit: per (organisation, node) chains shipped verbatim.
	RuleAudit
	// RuleNumbers: counters drawn from blocks leased from the hub.
	RuleNumbers
	// RuleDocuments and RuleFiles: content-addressed chunks, revisions,
	// branch heads and blobs (issue II of sync).
	RuleDocuments
	RuleFiles
)

// TablePolicy is one table's entry in the catalogue.
type TablePolicy struct {
	Policy SyncPolicy
	Rule   MergeRule // Replicated only
	// DerivedColumns of a replicated table are kept by triggers on each
	// node (counts): never shipped, recomputed by RebuildDerived.
	DerivedColumns []string
	// Org names the column that holds the row's organisation ("" when the
	// table has none); OrgVia finds it through a parent row instead.
	Org    string
	OrgVia *OrgVia
	// Rebuild (Derived only) recomputes the whole table from replicated
	// rows, run after changes were applied.
	Rebuild []string
	// DuplicateKey (evidence): columns naming one person's record of one
	// thing. Two nodes' records with one key are both kept; all but the
	// first (by id) carry duplicate_of, a derived column.
	DuplicateKey []string
	// UniqueKey (RuleUnique): the columns a row's key is unique within,
	// the last one the key itself (a code: empty means none). Rows two
	// nodes gave one key are both kept, the later renamed, with a conflict
	// record (docs/sync.md).
	UniqueKey []string
	// Objects (document chunks, blobs): content-addressed and never
	// changed, so never logged; a page names the ones its rows need and
	// they move by hash (syncobjects.go).
	Objects bool
	// IndexKey: a key a unique index of the table enforces, and how two
	// nodes' rows with one are kept (db/syncindexkeys.go).
	IndexKey *IndexKeyRule
}

func (p TablePolicy) objects() TablePolicy { p.Objects = true; return p }

func (p TablePolicy) indexKey(r IndexKeyRule) TablePolicy { p.IndexKey = &r; return p }

func (p TablePolicy) unique(cols ...string) TablePolicy { p.UniqueKey = cols; return p }

// OrgVia: the organisation is Table.organisation_id of the row whose id is
// this row's Column.
type OrgVia struct{ Table, Column string }

func local() TablePolicy { return TablePolicy{Policy: Local} }

func repl(rule MergeRule) TablePolicy {
	return TablePolicy{Policy: Replicated, Rule: rule, Org: "organisation_id"}
}

func (p TablePolicy) orgCol(c string) TablePolicy { p.Org = c; return p }

func (p TablePolicy) noOrg() TablePolicy { p.Org = ""; return p }

func (p TablePolicy) via(table, column string) TablePolicy {
	p.Org, p.OrgVia = "", &OrgVia{Table: table, Column: column}
	return p
}

func (p TablePolicy) derivedCols(cols ...string) TablePolicy { p.DerivedColumns = cols; return p }

func (p TablePolicy) duplicates(key ...string) TablePolicy {
	p.DuplicateKey = key
	p.DerivedColumns = append(p.DerivedColumns, "duplicate_of")
	return p
}

func derived(rebuild ...string) TablePolicy { return TablePolicy{Policy: Derived, Rebuild: rebuild} }

// Counts kept by the work item triggers, recomputed from work_items.
var rebuildWorkItemCounts = []string{
	`UPDATE projects SET
		open_work_item_count = (SELECT count(*) FROM work_items w WHERE w.project_id = projects.id AND w.status = 'open'),
		closed_work_item_count = (SELECT count(*) FROM work_items w WHERE w.project_id = projects.id AND w.status = 'closed')`,
	`UPDATE project_milestones SET
		open_work_item_count = (SELECT count(*) FROM work_items w WHERE w.milestone_id = project_milestones.id AND w.status = 'open'),
		closed_work_item_count = (SELECT count(*) FROM work_items w WHERE w.milestone_id = project_milestones.id AND w.status = 'closed')`,
	`DELETE FROM work_item_type_counts`,
	`INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
	 SELECT s.value, w.type_id, sum(w.status = 'open'), sum(w.status = 'closed')
	 FROM work_items w, json_each(json_array(w.project_id, w.milestone_id)) s
	 WHERE s.value IS NOT NULL GROUP BY s.value, w.type_id`,
}

// SyncCatalogue is every table's policy.
var SyncCatalogue = map[string]TablePolicy{
	// Node-local: keys, tokens, codes, queues, markers of mails sent, the
	// sync log itself.
	"meta":                   local(),
	"schema_migrations":      local(),
	"signing_keys":           local(),
	"refresh_tokens":         local(),
	"user_tokens":            local(),
	"password_resets":        local(),
	"oauth_codes":            local(),
	"outbox":                 local(),
	"integration_deliveries": local(), // each node delivers the events it raised
	"induction_reminders":    local(), // marks reminders this node mailed
	"signing_code_uses":      local(), // replay guard of codes used on this node
	"document_accesses":      local(), // a person's recently opened documents, per node
	"sync_changes":           local(),
	"sync_received":          local(),
	"sync_pairing_codes":     local(),
	"sync_nodes":             local(),
	"sync_node_orgs":         local(),
	"sync_nonces":            local(),
	"sync_hub":               local(),
	"sync_number_blocks":     local(), // a clone's leased blocks
	"sync_number_grants":     local(), // the hub's book of blocks leased
	"sync_object_staging":    local(), // objects fetched, not yet stored
	"sync_exchange_tally":    local(), // the hub's count of an exchange under way
	"sync_pruned":            local(), // how far the log was pruned
	"sync_lease":             local(), // the exchange running on this file
	"sync_object_pieces":     local(), // pieces of a large file on its way
	// Bytes of document chunks this node stored first, per organisation
	// (storage_usage): each node counts what it holds, chunks received by
	// sync charged to the organisation whose page brought them.
	"organisation_document_storage": local(),

	// Derived: recomputed from replicated rows.
	"project_status_counts": derived(
		`DELETE FROM project_status_counts`,
		`INSERT INTO project_status_counts(organisation_id, status, n)
		 SELECT organisation_id, status, count(*) FROM projects GROUP BY organisation_id, status`),
	"work_item_type_counts": derived(rebuildWorkItemCounts...),
	"user_work_items": derived(
		`DELETE FROM user_work_items`,
		`INSERT OR IGNORE INTO user_work_items
		 SELECT u.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id, w.document_id, w.fleet_id,
			w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
		 FROM (SELECT work_item_id, user_id FROM work_item_assignees
			UNION SELECT sc.work_item_id, si.user_id FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
			WHERE sc.work_item_id IS NOT NULL AND si.status <> 'declined') u
		 JOIN work_items w ON w.id = u.work_item_id`),
	// A new tag per organisation: every cache of access starts again.
	"access_versions": derived(
		`INSERT INTO access_versions(organisation_id, tag) SELECT id, random() FROM organisations WHERE true
		 ON CONFLICT(organisation_id) DO UPDATE SET tag = excluded.tag`),

	// Accounts: the members of the node's organisations, so they sign in
	// offline; profile columns merge per column.
	"users":             repl(RulePlain).noOrg().indexKey(IndexKeyRule{Cols: []string{"email"}, Where: "deleted_at IS NULL", Held: heldAddress}),
	"user_emails":       repl(RuleUnique).noOrg(),
	"user_identities":   repl(RuleSecurity).noOrg(),
	"user_totp_secrets": repl(RulePlain).noOrg(),

	// Security state: fail closed.
	"organisations":        repl(RuleSecurity).orgCol("id").derivedCols("storage_usage"),
	"organisation_members": repl(RuleSecurity),
	"organisation_bans":    repl(RuleSecurity),
	"roles":                repl(RuleSecurity),
	"member_roles":         repl(RuleSecurity),
	"permission_grants":    repl(RuleSecurity),
	"invites":              repl(RuleSecurity),
	"fleet_shares":         repl(RuleSecurity),
	"project_shares":       repl(RuleSecurity),
	"document_shares":      repl(RuleSecurity),
	"organisation_domains": repl(RuleUnique).indexKey(IndexKeyRule{Cols: []string{"organisation_id", "domain"}}),

	// Plain records.
	"projects": repl(RuleUnique).unique("organisation_id", "code").derivedCols("open_milestone_count", "closed_milestone_count",
		"open_work_item_count", "closed_work_item_count", "document_count"),
	"project_milestones":      repl(RulePlain).derivedCols("open_work_item_count", "closed_work_item_count"),
	"project_packages":        repl(RuleUnique).unique("project_id", "code"),
	"workgroups":              repl(RulePlain),
	"teams":                   repl(RulePlain),
	"team_members":            repl(RulePlain),
	"systems":                 repl(RulePlain),
	"prefixes":                repl(RulePlain),
	"locations":               repl(RuleUnique).unique("organisation_id", "code"),
	"sub_locations":           repl(RuleUnique).unique("location_id", "code"),
	"disciplines":             repl(RuleUnique).unique("organisation_id", "code"),
	"integrations":            repl(RulePlain),
	"inductions":              repl(RulePlain),
	"user_inductions":         repl(RulePlain).indexKey(IndexKeyRule{Cols: []string{"induction_id", "user_id"}}),
	"location_inductions":     repl(RulePlain),
	"work_item_types":         repl(RulePlain),
	"work_items":              repl(RulePlain),
	"work_item_assignees":     repl(RulePlain).via("work_items", "work_item_id"),
	"work_item_subscriptions": repl(RulePlain).via("work_items", "work_item_id"),
	"schedules":               repl(RulePlain),
	"schedule_invitees":       repl(RulePlain).via("schedules", "schedule_id"),
	"fleets":                  repl(RulePlain),
	"fleet_subscriptions":     repl(RulePlain).via("fleets", "fleet_id"),
	"asset_statuses":          repl(RulePlain),
	"asset_zones":             repl(RulePlain),
	"asset_fields":            repl(RulePlain),
	"asset_field_enum_values": repl(RulePlain).indexKey(IndexKeyRule{Cols: []string{"asset_field_id", "value"}}),
	"asset_types":             repl(RulePlain),
	"asset_type_fields":       repl(RulePlain),
	"asset_type_zones":        repl(RulePlain),
	"asset_subscriptions":     repl(RulePlain),
	"asset_groups":            repl(RulePlain).derivedCols("open_work_item_count", "closed_work_item_count"),
	"asset_group_members":     repl(RulePlain),
	"asset_field_values":      repl(RulePlain),
	"toolboxes":               repl(RulePlain),
	"toolbox_sections":        repl(RulePlain),
	"toolbox_topics":          repl(RulePlain),
	"document_types":          repl(RulePlain),
	"document_fields":         repl(RulePlain),
	"document_field_values":   repl(RulePlain).via("document_fields", "field_id"),
	"notifications":           repl(RulePlain),
	// Conflicts sync found (made on the hub), settled on any node.
	"sync_conflicts": repl(RulePlain),

	// Evidence: append-only union.
	"induction_revisions": repl(RuleEvidence),
	"induction_records":   repl(RuleEvidence),
	"asset_logs":          repl(RuleEvidence),
	"toolbox_users":       repl(RuleEvidence).duplicates("toolbox_id", "user_id"),
	"witness_records":     repl(RuleEvidence).duplicates("object_type", "object_id", "user_id"),
	"audit_log":           repl(RuleAudit),

	// Numbers drawn from leased blocks.
	"organisation_counters": repl(RuleNumbers),

	// Documents and files (issue II).
	"documents":          repl(RuleDocuments),
	"document_chunks":    repl(RuleDocuments).noOrg().objects(),
	"document_revisions": repl(RuleDocuments).via("documents", "document_id"),
	"document_branches": repl(RuleDocuments).indexKey(IndexKeyRule{Cols: []string{"document_id", "name"},
		Where: "deleted_at IS NULL", Rename: maxDocKey}),
	"document_merge_requests": repl(RuleDocuments),
	"document_tags":           repl(RuleDocuments).indexKey(IndexKeyRule{Cols: []string{"document_id", "release", "label"}, Rename: maxDocKey}),
	"document_bookmarks":      repl(RuleDocuments).via("documents", "document_id"),
	"document_field_bindings": repl(RuleDocuments).via("documents", "document_id"),
	"blobs":                   repl(RuleFiles).noOrg().objects(),
	"organisation_blobs":      repl(RuleFiles),
}

// OrgRebuild recomputes, for one organisation (?1), derived columns of
// replicated tables that handlers keep (not triggers): after a page that
// touched any of After was applied, for each organisation it touched.
type OrgRebuild struct {
	After   []string
	Columns []string // "table.column" kept by it
	SQL     string
}

var syncOrgRebuilds = []OrgRebuild{
	storageRecount,
	// Duplicate evidence: all but the first (by id) of one key flagged
	// with the first's id. Flagging goes first (a unique index admits one
	// unflagged row per key), unflagging after.
	dupRebuild("toolbox_users", "o.toolbox_id = x.toolbox_id AND o.user_id = x.user_id", "x.user_id IS NOT NULL", true),
	dupRebuild("toolbox_users", "o.toolbox_id = x.toolbox_id AND o.user_id = x.user_id", "x.user_id IS NOT NULL", false),
	dupRebuild("witness_records", "o.object_type = x.object_type AND o.object_id = x.object_id AND o.user_id = x.user_id", "true", true),
	dupRebuild("witness_records", "o.object_type = x.object_type AND o.object_id = x.object_id AND o.user_id = x.user_id", "true", false),
	{After: []string{"project_milestones", "projects"},
		Columns: []string{"projects.open_milestone_count", "projects.closed_milestone_count"},
		SQL: `UPDATE projects SET
			open_milestone_count = (SELECT count(*) FROM project_milestones m WHERE m.project_id = projects.id AND m.status = 'open'),
			closed_milestone_count = (SELECT count(*) FROM project_milestones m WHERE m.project_id = projects.id AND m.status = 'closed')
		WHERE organisation_id = ?1`},
	{After: []string{"documents", "projects"},
		Columns: []string{"projects.document_count"},
		SQL: `UPDATE projects SET document_count = (SELECT count(*) FROM documents d WHERE d.project_id = projects.id AND d.deleted_at IS NULL)
		WHERE organisation_id = ?1`},
	{After: []string{"work_items", "asset_groups"},
		Columns: []string{"asset_groups.open_work_item_count", "asset_groups.closed_work_item_count"},
		SQL: `UPDATE asset_groups SET
			open_work_item_count = (SELECT count(*) FROM work_items w WHERE w.asset_group_id = asset_groups.id AND w.status = 'open'),
			closed_work_item_count = (SELECT count(*) FROM work_items w WHERE w.asset_group_id = asset_groups.id AND w.status <> 'open')
		WHERE organisation_id = ?1`},
}

// storageRecount is organisations.storage_usage as the handlers keep it:
// the files its rows name, and the document chunks this node stored first
// for it (organisation_document_storage, node-local: a change made here,
// the hub's merge, or an object received for its page).
var storageRecount = OrgRebuild{After: []string{"organisation_blobs", "organisations"},
	Columns: []string{"organisations.storage_usage"},
	SQL: `UPDATE organisations SET storage_usage =
		coalesce((SELECT sum(b.size) FROM organisation_blobs ob JOIN blobs b ON b.hash = ob.hash WHERE ob.organisation_id = organisations.id), 0)
		+ coalesce((SELECT bytes FROM organisation_document_storage s WHERE s.organisation_id = organisations.id), 0)
	WHERE id = ?1`}

func dupRebuild(table, same, cond string, flag bool) OrgRebuild {
	first := `(SELECT min(o.id) FROM ` + table + ` o WHERE ` + same + `)`
	sql := `UPDATE ` + table + ` AS x SET duplicate_of = ` + first + ` WHERE x.organisation_id = ?1 AND ` + cond +
		` AND x.duplicate_of IS NOT ` + first + ` AND x.id <> ` + first
	if !flag {
		sql = `UPDATE ` + table + ` AS x SET duplicate_of = NULL WHERE x.organisation_id = ?1 AND x.duplicate_of IS NOT NULL AND x.id = ` + first
	}
	return OrgRebuild{After: []string{table}, Columns: []string{table + ".duplicate_of"}, SQL: sql}
}

// triggerKeptColumns are derived columns the work item triggers keep on
// every node (and RebuildDerived recounts).
var triggerKeptColumns = []string{"projects.open_work_item_count", "projects.closed_work_item_count",
	"project_milestones.open_work_item_count", "project_milestones.closed_work_item_count"}

// laterDerivedColumns are derived columns whose inputs do not travel yet,
// with the reason.
var laterDerivedColumns = map[string]string{}

// rebuildAll lists every derived table's statements, tables in name
// order (work_item_type_counts' also recount the projects' and milestones'
// work item columns).
func rebuildAll() []string {
	var names []string
	for name, p := range SyncCatalogue {
		if p.Policy == Derived {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		out = append(out, SyncCatalogue[name].Rebuild...)
	}
	return out
}

// RebuildDerived recomputes every derived table (and the counts kept in
// replicated tables by the same triggers) from the replicated rows, after
// changes from another node were applied.
func RebuildDerived(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range rebuildAll() {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
	}
	return nil
}
