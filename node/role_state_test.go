package node

import (
	"testing"
)

// The role's state survives the store being opened again (a restart), and
// names that are not plain file names are refused.
func TestRoleStatePersists(t *testing.T) {
	dir := t.TempDir()
	s, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := (roleState{s}).Load("balance_level.json"); ok || err != nil {
		t.Fatalf("empty store: ok %v err %v", ok, err)
	}
	if err := (roleState{s}).Save("balance_level.json", []byte(`{"pitch_offset_deg":1.7}`)); err != nil {
		t.Fatal(err)
	}
	again, err := NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, ok, err := (roleState{again}).Load("balance_level.json")
	if err != nil || !ok || string(data) != `{"pitch_offset_deg":1.7}` {
		t.Fatalf("after reopening: %q %v %v", data, ok, err)
	}
	for _, bad := range []string{"", "..", "../role.yaml", "a/b", ".hidden"} {
		if err := (roleState{s}).Save(bad, []byte("x")); err == nil {
			t.Errorf("Save(%q) accepted", bad)
		}
	}
}
