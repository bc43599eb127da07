package adoption

import (
	"errors"
	"testing"
)

func TestNormalizeRole(t *testing.T) {
	for _, tc := range []struct {
		role, inst         string
		wantRole, wantInst string
		field              string // "" = accepted
	}{
		{"head", "", "head", "", ""},
		{"arms", "left", "arms", "left", ""},
		{"arms_right", "", "arms", "right", ""},
		{"arms_right", "right", "arms", "right", ""},
		{"arms_right", "left", "", "", "instance"},
		{"arms", "", "", "", "instance"},
		{"arms", "middle", "", "", "instance"},
		{"head", "left", "", "", "instance"},
		{"wings", "", "", "", "role"},
		{"", "", "", "", "role"},
	} {
		r, i, err := NormalizeRole(tc.role, tc.inst)
		var pe *ParamError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("NormalizeRole(%q, %q): %v", tc.role, tc.inst, err)
		case tc.field != "" && (!errors.As(err, &pe) || pe.Field != tc.field):
			t.Errorf("NormalizeRole(%q, %q) error %v, want one naming %s", tc.role, tc.inst, err, tc.field)
		case tc.field == "" && (r != tc.wantRole || i != tc.wantInst):
			t.Errorf("NormalizeRole(%q, %q) = %q %q, want %q %q", tc.role, tc.inst, r, i, tc.wantRole, tc.wantInst)
		}
	}
}
