package adoption

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
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

func TestRegistryFollowsWhatNodesSay(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	dir := t.TempDir()
	m, err := New(Options{Exec: ex, Bus: b, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration) {
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	ex.Post(func() {
		if err := m.Start(); err != nil {
			t.Error(err)
		}
	})
	run(0)

	// An ACTIVE node the registry does not know is taken in (and saved).
	_ = b.Publish(msg.NodeStatusTopic("n1"), msg.NodeStatus{NodeID: "n1", State: msg.StateActive, Role: "arms", Instance: "left"})
	run(100 * time.Millisecond)
	if _, a, _ := m.Lookup("n1"); a == nil || a.Role != "arms" || a.Instance != "left" || !a.Online {
		t.Fatalf("ACTIVE node not registered: %+v", a)
	}
	if m2, err := New(Options{Exec: ex, Bus: b, DataDir: dir}); err != nil || len(m2.Adopted()) != 1 {
		t.Errorf("registration not persisted: %v", err)
	}

	// An announcement that overtook the adoption is ignored...
	_ = b.Publish(msg.TopicUnadopted, msg.NodeGPIOStatus{NodeID: "n1"})
	run(time.Second)
	if _, a, _ := m.Lookup("n1"); a == nil {
		t.Fatal("adoption dropped by an announcement sent before it")
	}
	// ...but a node that says it is unadopted later was reset locally.
	run(2 * time.Second)
	_ = b.Publish(msg.TopicUnadopted, msg.NodeGPIOStatus{NodeID: "n1"})
	run(100 * time.Millisecond)
	if u, a, _ := m.Lookup("n1"); a != nil || u == nil {
		t.Errorf("node reset by its button still adopted: adopted %+v unadopted %+v", a, u)
	}
	// Unadopted nodes that fall silent expire.
	run(UnadoptedExpiry + 2*time.Second)
	if u, _, _ := m.Lookup("n1"); u != nil {
		t.Error("silent unadopted node still listed")
	}
}

// A damaged adopted.json does not keep the server from starting: it is
// moved aside, kept for repair, reported as an error event, and the
// registry starts empty.
func TestDamagedRegistryMovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "adopted.json")
	bad := []byte(`[{"node_id":"n1","role":"he`)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	var events []string
	m, err := New(Options{Exec: executor.NewVirtual(), Bus: mem.New(), DataDir: dir,
		OnEvent: func(level, _, text string) { events = append(events, level+": "+text) }})
	if err != nil {
		t.Fatalf("a damaged registry stopped the manager: %v", err)
	}
	if len(m.Adopted()) != 0 {
		t.Errorf("adopted %v from a damaged registry", m.Adopted())
	}
	moved, _ := filepath.Glob(path + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("moved aside: %v, want one copy", moved)
	}
	if got, _ := os.ReadFile(moved[0]); !bytes.Equal(got, bad) {
		t.Errorf("the kept copy holds %q", got)
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "ERROR: ") || !strings.Contains(events[0], moved[0]) {
		t.Errorf("events %q, want one error naming the kept copy", events)
	}
}

// Whatever adopted.json holds, the manager starts: the file is taken or
// moved aside, never a panic or a refusal to start.
func FuzzRegistryFile(f *testing.F) {
	f.Add([]byte(`[{"node_id":"n1","role":"head","display_name":"Head","adopted_at":"2026-01-01T00:00:00Z"}]`))
	f.Add([]byte(`[{"node_id":"n1","role":"he`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[null]`))
	f.Add([]byte(`[{"node_id":"../x","role":"head"},{"node_id":"n1","role":"wings"}]`))
	f.Add([]byte(`[null, {"node_id": 5}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "adopted.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := New(Options{Exec: executor.NewVirtual(), Bus: mem.New(), DataDir: dir}); err != nil {
			t.Fatalf("registry %q stopped the manager: %v", data, err)
		}
	})
}
