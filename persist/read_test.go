package persist

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

type record struct {
	Name string `json:"name" yaml:"name"`
	N    int    `json:"n" yaml:"n"`
}

func TestReadJSONRefusesWhatHoldsNoValue(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	var v []record
	if found, err := ReadJSON(p, &v); found || err != nil {
		t.Fatalf("missing file: found %v, err %v; want not found, no error", found, err)
	}
	for _, bad := range []string{"", "  \n", "null", " null\n", `[{"name":"a","n":1}`, `[{"name":"a"`, "[", `[]x`, `[] []`, "\x00\x00\x00", `{"name":"a"}`} {
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		found, err := ReadJSON(p, &v)
		if !found || !errors.Is(err, ErrDamaged) {
			t.Errorf("%q: found %v, err %v; want found and ErrDamaged", bad, found, err)
		}
	}
	if err := os.WriteFile(p, []byte(` [{"name":"a","n":1}]`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v = nil
	if found, err := ReadJSON(p, &v); !found || err != nil || len(v) != 1 || v[0] != (record{"a", 1}) {
		t.Errorf("a good file: %v %v %+v", found, err, v)
	}
	if err := os.WriteFile(p, []byte(`[]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSON(p, &v); err != nil || len(v) != 0 {
		t.Errorf("an empty list is a value: %v %+v", err, v)
	}
}

func TestReadYAMLRefusesWhatHoldsNoValue(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.yaml")
	var v record
	if found, err := ReadYAML(p, &v); found || err != nil {
		t.Fatalf("missing file: found %v, err %v", found, err)
	}
	for _, bad := range []string{"", "\n\n", "# only a comment\n", "null", "~\n", "name: [a", "name: \"a", "just text", "- 1\n- 2\n", "\t\x00"} {
		if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		found, err := ReadYAML(p, &v)
		if !found || !errors.Is(err, ErrDamaged) {
			t.Errorf("%q: found %v, err %v; want found and ErrDamaged", bad, found, err)
		}
	}
	if err := os.WriteFile(p, []byte("name: a\nn: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v = record{}
	if found, err := ReadYAML(p, &v); !found || err != nil || v != (record{"a", 2}) {
		t.Errorf("a good file: %v %v %+v", found, err, v)
	}
}
