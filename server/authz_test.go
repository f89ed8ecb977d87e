package server

import "testing"

func TestEffective(t *testing.T) {
	const p, q = ViewProjects, AdminProjects
	tests := []struct {
		name   string
		grants []Grant
		want   PermSet
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

func TestAccessOwnerAndPending(t *testing.T) {
	owner := Access{Owner: true}
	if !owner.Can(ManageRoles) || owner.Permissions() != AllPermissions {
		t.Errorf("owner must hold every permission")
	}
	pending := Access{Member: true, Pending: true, perms: AllPermissions}
	if pending.Can(ViewProjects) || pending.IsMember() {
		t.Errorf("a pending member must count as no member")
	}
	outsider := Access{perms: ViewProjects}
	if outsider.Can(ViewProjects) {
		t.Errorf("a non-member must hold nothing")
	}
	ranked := Access{Member: true, TopRank: 2}
	if ranked.Outranks(2) || ranked.Outranks(1) || !ranked.Outranks(3) {
		t.Errorf("Outranks must hold only for roles ranked strictly below")
	}
}

func TestPermissionCatalogue(t *testing.T) {
	if len(permissionNames) != 18 {
		t.Fatalf("catalogue has %d names, want the spec's 18", len(permissionNames))
	}
	for name, p := range permissionByName {
		if p.Name() != name {
			t.Errorf("%s round-trips to %q", name, p.Name())
		}
	}
}
