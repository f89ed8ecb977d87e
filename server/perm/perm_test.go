package perm

import "testing"

func TestEffective(t *testing.T) {
	t.Parallel()
	const p, q = ViewProjects, AdminProjects
	tests := []struct {
		name   string
		grants []Grant
		want   Set
	}{
		{"nothing set anywhere is denied", nil, 0},
		{"everyone allows", []Grant{{Scope: ScopeOrganisation, Target: TargetEveryone, Allow: p}}, p},
		{"role beats everyone", []Grant{
			{Scope: ScopeOrganisation, Target: TargetEveryone, Allow: p},
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 3, Deny: p},
		}, 0},
		{"user beats role", []Grant{
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 0, Deny: p},
			{Scope: ScopeOrganisation, Target: TargetUser, Allow: p},
		}, p},
		{"highest-ranked role decides", []Grant{
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 5, Allow: p},
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 1, Deny: p},
		}, 0},
		{"lower role decides what higher leaves unset", []Grant{
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 1, Allow: q},
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 5, Allow: p},
		}, p | q},
		{"project layer beats organisation user grant", []Grant{
			{Scope: ScopeOrganisation, Target: TargetUser, Allow: p},
			{Scope: ScopeProject, Target: TargetEveryone, Deny: p},
		}, 0},
		{"package layer beats project layer", []Grant{
			{Scope: ScopeProject, Target: TargetUser, Deny: p},
			{Scope: ScopePackage, Target: TargetEveryone, Allow: p},
		}, p},
		{"unset in a layer falls through to the next", []Grant{
			{Scope: ScopePackage, Target: TargetUser, Allow: q},
			{Scope: ScopeOrganisation, Target: TargetEveryone, Allow: p},
		}, p | q},
		{"user grant unset: a role decides", []Grant{
			{Scope: ScopeOrganisation, Target: TargetUser, Allow: q},
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 4, Allow: p},
		}, p | q},
		{"roles unset: everyone decides, even against a lower layer", []Grant{
			{Scope: ScopeProject, Target: TargetRole, Rank: 0, Allow: q},
			{Scope: ScopeProject, Target: TargetEveryone, Deny: p},
			{Scope: ScopeOrganisation, Target: TargetUser, Allow: p},
		}, q},
		{"everyone denies", []Grant{{Scope: ScopeOrganisation, Target: TargetEveryone, Deny: p}}, 0},
		{"project user grant beats project role and everyone", []Grant{
			{Scope: ScopeProject, Target: TargetEveryone, Allow: p},
			{Scope: ScopeProject, Target: TargetRole, Rank: 0, Allow: p},
			{Scope: ScopeProject, Target: TargetUser, Deny: p},
		}, 0},
		{"input order does not matter", []Grant{
			{Scope: ScopeOrganisation, Target: TargetEveryone, Allow: p},
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 9, Allow: p},
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 2, Deny: p},
			{Scope: ScopePackage, Target: TargetRole, Rank: 7, Allow: q},
		}, q},
		{"deny in organisation layer holds when nothing nearer sets it", []Grant{
			{Scope: ScopeOrganisation, Target: TargetUser, Deny: p},
			{Scope: ScopeOrganisation, Target: TargetEveryone, Allow: p},
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Effective(tt.grants); got != tt.want {
				t.Errorf("got %b, want %b", got, tt.want)
			}
		})
	}
}

// TestCatalogueIsPinned pins every bit to its name as stored masks and the
// spec know them: two swapped names, a renumbered bit or a missing entry
// fail here.
func TestCatalogueIsPinned(t *testing.T) {
	t.Parallel()
	want := []struct {
		bit  uint32
		name string
	}{
		{1 << 0, "CREATE_INVITE"}, {1 << 1, "REVOKE_INVITE"}, {1 << 2, "CREATE_PROJECTS"},
		{1 << 3, "ADMIN_PROJECTS"}, {1 << 4, "VIEW_PROJECTS"}, {1 << 5, "SHARE_PROJECTS"},
		{1 << 6, "VIEW_WORKITEMS"}, {1 << 7, "CREATE_WORKITEMS"}, {1 << 8, "VIEW_DOCUMENTS"},
		{1 << 9, "EDIT_DOCUMENTS"}, {1 << 10, "MANAGE_ORGANISATION"}, {1 << 11, "MANAGE_ROLES"},
		{1 << 12, "MANAGE_TEAMS"}, {1 << 13, "MANAGE_WORKGROUPS"}, {1 << 14, "MANAGE_LOCATIONS"},
		{1 << 15, "MANAGE_SYSTEMS"}, {1 << 16, "MANAGE_INDUCTIONS"}, {1 << 17, "MANAGE_FLEETS"},
	}
	if len(Catalogue) != len(want) {
		t.Fatalf("Catalogue has %d entries, want the spec's %d", len(Catalogue), len(want))
	}
	for i, w := range want {
		c := Catalogue[i]
		if uint32(c.Bit) != w.bit || c.Name != w.name {
			t.Errorf("entry %d: got {%#x %s}, want {%#x %s}", i, uint32(c.Bit), c.Name, w.bit, w.name)
		}
		if got, ok := ByName(w.name); !ok || uint32(got) != w.bit {
			t.Errorf("%s parses to %#x, want %#x", w.name, uint32(got), w.bit)
		}
		if got := Permission(w.bit).Name(); got != w.name {
			t.Errorf("%#x is named %q, want %s", w.bit, got, w.name)
		}
	}
	if All != Permission(1<<len(want)-1) {
		t.Errorf("All = %#x", uint32(All))
	}
}

func TestCatalogueDescribed(t *testing.T) {
	t.Parallel()
	for _, c := range Catalogue {
		if c.Description == "" {
			t.Errorf("%s has no description", c.Name)
		}
	}
}

// TestHolds: what a caller of each standing holds, from its membership and
// the grants that apply to it.
func TestHolds(t *testing.T) {
	t.Parallel()
	everyoneViews := []Grant{{Scope: ScopeOrganisation, Target: TargetEveryone, Allow: ViewProjects | ViewDocuments}}
	roleAdmin := []Grant{
		{Scope: ScopeOrganisation, Target: TargetEveryone, Deny: ViewProjects},
		{Scope: ScopeOrganisation, Target: TargetRole, Rank: 1, Allow: AdminProjects},
	}
	tests := []struct {
		name                   string
		owner, member, pending bool
		grants                 []Grant
		onProject              bool
		shared                 Set
		ask                    Permission
		want                   bool
	}{
		{"the owner holds everything, with no grant", true, true, false, nil, false, 0, ManageRoles, true},
		{"the owner holds the whole catalogue at once", true, true, false, nil, false, 0, All, true},
		{"the owner is a member", true, false, false, nil, false, 0, 0, true},
		{"a member holds membership", false, true, false, nil, false, 0, 0, true},
		{"a member holds what @everyone allows", false, true, false, everyoneViews, false, 0, ViewProjects, true},
		{"a member lacks what no grant allows", false, true, false, everyoneViews, false, 0, EditDocuments, false},
		{"a set is held only whole", false, true, false, everyoneViews, false, 0, ViewProjects | EditDocuments, false},
		{"a role's grant is held", false, true, false, roleAdmin, false, 0, AdminProjects, true},
		{"ADMIN_PROJECTS gives no view in the organisation", false, true, false, roleAdmin, false, 0, ViewProjects, false},
		{"ADMIN_PROJECTS implies VIEW_PROJECTS on a project", false, true, false, roleAdmin, true, 0, ViewProjects, true},
		{"a user's deny beats a role's allow", false, true, false, []Grant{
			{Scope: ScopeOrganisation, Target: TargetRole, Rank: 0, Allow: ManageTeams},
			{Scope: ScopeOrganisation, Target: TargetUser, Deny: ManageTeams},
		}, false, 0, ManageTeams, false},
		{"a project grant beats the organisation's", false, true, false, []Grant{
			{Scope: ScopeOrganisation, Target: TargetUser, Deny: EditDocuments},
			{Scope: ScopeProject, Target: TargetEveryone, Allow: EditDocuments},
		}, true, 0, EditDocuments, true},
		{"a pending member holds nothing its grants allow", false, true, true, everyoneViews, false, 0, ViewProjects, false},
		{"a pending member is no member", false, true, true, nil, false, 0, 0, false},
		{"a non-member holds nothing", false, false, false, everyoneViews, false, 0, ViewProjects, false},
		{"a non-member is no member, even with a share", false, false, false, nil, true, ProjectShare, 0, false},
		{"a project share gives viewing", false, false, false, nil, true, ProjectShare, ViewDocuments, true},
		{"a project share gives nothing more", false, false, false, nil, true, ProjectShare, EditDocuments, false},
		{"a member's shares count for nothing: its grants decide", false, true, false, nil, true, ProjectShare, ViewProjects, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Resolve(tt.owner, tt.member, tt.pending, tt.grants, tt.onProject)
			s.Shared = tt.shared
			if got := s.Holds(tt.ask); got != tt.want {
				t.Errorf("Holds(%#x) = %v, want %v (standing %+v)", uint32(tt.ask), got, tt.want, s)
			}
			if got := s.Permissions()&tt.ask == tt.ask && tt.ask != 0; tt.ask != 0 && got != tt.want {
				t.Errorf("Permissions() = %#x disagrees with Holds(%#x) = %v", uint32(s.Permissions()), uint32(tt.ask), tt.want)
			}
		})
	}
}
