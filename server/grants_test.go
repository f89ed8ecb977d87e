package server

import (
	"net/http"
	"testing"
)

func TestParseGrantChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         map[string]string
		keys       PermSet
		wantStatus int
		want       grantChange
	}{
		{"missing object", nil, AllPermissions, http.StatusBadRequest, grantChange{}},
		{"unknown name", map[string]string{"FLY": "allow"}, AllPermissions, http.StatusBadRequest, grantChange{}},
		{"name outside the scope's keys", map[string]string{"MANAGE_ROLES": "allow"}, ProjectPermissions, http.StatusBadRequest, grantChange{}},
		{"bad grant type", map[string]string{"VIEW_PROJECTS": "yes"}, AllPermissions, http.StatusBadRequest, grantChange{}},
		{"all three types", map[string]string{"VIEW_PROJECTS": "allow", "ADMIN_PROJECTS": "deny", "SHARE_PROJECTS": "inherit"}, ProjectPermissions, 0,
			grantChange{allow: ViewProjects, deny: AdminProjects, inherit: ShareProjects}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseGrantChange("permissions", tt.in, tt.keys)
			if tt.wantStatus != 0 {
				e, ok := err.(*Error)
				if !ok || e.Status != tt.wantStatus {
					t.Fatalf("got error %v, want status %d", err, tt.wantStatus)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestGrantChangeApply(t *testing.T) {
	t.Parallel()
	c := grantChange{allow: ViewProjects, deny: AdminProjects, inherit: ShareProjects}
	allow, deny := c.apply(ShareProjects|CreateInvite, AdminProjects|ViewProjects)
	if allow != ViewProjects|CreateInvite || deny != AdminProjects {
		t.Errorf("got allow %b deny %b", allow, deny)
	}
}

func TestCheckGrantable(t *testing.T) {
	t.Parallel()
	holder := Access{Member: true, perms: ManageRoles | ViewProjects}
	if err := checkGrantable(holder, grantChange{allow: ViewProjects}); err != nil {
		t.Errorf("granting a held permission: %v", err)
	}
	if err := checkGrantable(holder, grantChange{deny: AdminProjects}); err == nil {
		t.Errorf("changing a permission not held must be refused")
	}
	if err := checkGrantable(Access{Owner: true}, grantChange{allow: AllPermissions}); err != nil {
		t.Errorf("owner is exempt: %v", err)
	}
}
