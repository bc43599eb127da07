package adoption

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/roles/rolespec"
	"github.com/saint-os/saint/server/firmware"
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
		{"limb", "leg_left", "limb", "leg_left", ""},
		{"limb", "", "", "", "instance"},
		{"limb_leg_left", "", "", "", "role"},
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

// A node found ACTIVE in any role of the table is registered under its
// role's display name: none is left without a name (the limb was, when
// the names were a list of their own).
func TestEveryRoleGetsADisplayName(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	m, err := New(Options{Exec: ex, Bus: b, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ex.Post(func() {
		if err := m.Start(); err != nil {
			t.Error(err)
		}
	})
	if err := ex.RunFor(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, s := range rolespec.Table() {
		inst := map[rolespec.Instances]string{rolespec.Sides: rolespec.Left, rolespec.Named: "leg_left"}[s.Instances]
		id := fmt.Sprintf("n%d", i)
		want[id] = map[string]string{rolespec.Limb: "Limb leg left", rolespec.Arms: "Arms L"}[s.Name]
		if want[id] == "" {
			want[id] = s.DisplayName
		}
		_ = b.Publish(msg.NodeStatusTopic(id), msg.NodeStatus{NodeID: id, State: msg.StateActive, Role: s.Name, Instance: inst})
	}
	if err := ex.RunFor(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for id, name := range want {
		if _, a, _ := m.Lookup(id); a == nil || a.DisplayName != name || name == "" {
			t.Errorf("%s: adopted %+v, want display name %q", id, a, name)
		}
	}
}

// With a robot type, the declared roles list groups a role's instances.
func TestAdoptionRefusesUndeclaredRoles(t *testing.T) {
	m := &Manager{o: Options{RobotType: "saint-T-0L10A2G3H0W", Roles: []RoleChoice{
		{"head", "head", ""}, {"arms_left", "arms", "left"}, {"arms_right", "arms", "right"}, {"tracks", "tracks", ""},
	}}}
	for _, ok := range [][2]string{{"head", ""}, {"arms", "right"}, {"tracks", ""}} {
		if err := m.declared(ok[0], ok[1]); err != nil {
			t.Errorf("%s %s refused: %v", ok[0], ok[1], err)
		}
	}
	const want = "role: robot type saint-T-0L10A2G3H0W has no limb neck: its robot configuration declares head, arms (instance left, right), tracks"
	var pe *ParamError
	if err := m.declared("limb", "neck"); !errors.As(err, &pe) || pe.Field != "role" || err.Error() != want {
		t.Errorf("limb neck: %v, want %q", err, want)
	}
	if err := m.declared("console", ""); err == nil {
		t.Error("console accepted")
	}
	// Without a robot type, anything.
	if err := (&Manager{}).declared("limb", "tail"); err != nil {
		t.Errorf("without a robot type: %v", err)
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
	_ = b.Publish(msg.NodeAnnounceTopic("n1"), msg.NodeGPIOStatus{NodeID: "n1"})
	run(time.Second)
	if _, a, _ := m.Lookup("n1"); a == nil {
		t.Fatal("adoption dropped by an announcement sent before it")
	}
	// ...but a node that says it is unadopted later was reset locally.
	run(2 * time.Second)
	_ = b.Publish(msg.NodeAnnounceTopic("n1"), msg.NodeGPIOStatus{NodeID: "n1"})
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
	good := `[{"node_id":"n1","role":"head","display_name":"Head","adopted_at":"2026-01-01T00:00:00Z"}]`
	f.Add([]byte(good))
	f.Add([]byte(`[{"node_id":"n1","role":"he`))
	f.Add([]byte(`null`))
	f.Add([]byte(" null\n"))
	f.Add([]byte(``))
	f.Add([]byte("\n"))
	f.Add([]byte(`[null]`))
	f.Add([]byte(`[{"node_id":"../x","role":"head"},{"node_id":"n1","role":"wings"}]`))
	f.Add([]byte(`[null, {"node_id": 5}]`))
	for _, n := range []int{1, 2, len(good) / 2, len(good) - 1} {
		f.Add([]byte(good[:n]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "adopted.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		var errorEvents int
		m, err := New(Options{Exec: executor.NewVirtual(), Bus: mem.New(), DataDir: dir,
			OnEvent: func(level, _, _ string) {
				if level == "ERROR" {
					errorEvents++
				}
			}})
		if err != nil {
			t.Fatalf("registry %q stopped the manager: %v", data, err)
		}
		var list []*Adopted
		if persist.DecodeJSON(data, &list) != nil {
			// Null, empty, truncated and garbled alike: kept aside, told,
			// and nothing taken from it.
			if _, err := os.Stat(filepath.Join(dir, "adopted.json")); !os.IsNotExist(err) {
				t.Fatalf("damaged registry %q left in place", data)
			}
			if aside, _ := filepath.Glob(filepath.Join(dir, "adopted.json.corrupt-*")); len(aside) != 1 {
				t.Fatalf("damaged registry %q: copies kept %v, want one", data, aside)
			}
			if errorEvents == 0 {
				t.Fatalf("damaged registry %q taken without an error event", data)
			}
			if n := len(m.Adopted()); n != 0 {
				t.Fatalf("damaged registry %q gave %d adopted nodes", data, n)
			}
		}
	})
}

// fakeAccess records grants as a bus authority would.
type fakeAccess struct{ roles map[string]string }

func (f *fakeAccess) Grant(id, role, instance, _ string) error {
	f.roles[id] = msg.RoleKey(role, instance)
	return nil
}
func (f *fakeAccess) Revoke(id string) error { delete(f.roles, id); return nil }
func (f *fakeAccess) Role(id string) (string, string, bool) {
	r, ok := f.roles[id]
	role, inst, _ := strings.Cut(r, "_")
	return role, inst, ok
}
func (f *fakeAccess) NodeKey(id string) string { return "U" + id }

// On an authenticated bus a node's word is not enough: an ACTIVE status or
// a stored role counts only for the role its key was granted, a status
// counts only on the node's own topic, and the shared announcement topic
// clears no adoption. A node in a registry from before authentication is
// granted at its validation.
func TestAuthenticatedBusTrustsGrantsNotWords(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	dir := t.TempDir()
	legacy := []byte(`[{"node_id":"old","role":"head","display_name":"Head","adopted_at":"2026-01-01T00:00:00Z"}]`)
	if err := os.WriteFile(filepath.Join(dir, "adopted.json"), legacy, 0o600); err != nil {
		t.Fatal(err)
	}
	access := &fakeAccess{roles: map[string]string{"t1": "tracks"}}
	m, err := New(Options{Exec: ex, Bus: b, DataDir: dir, Access: access})
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

	// Ungranted ACTIVE claims are not registered; the granted one is.
	_ = b.Publish(msg.NodeStatusTopic("evil"), msg.NodeStatus{NodeID: "evil", State: msg.StateActive, Role: "head"})
	_ = b.Publish(msg.NodeStatusTopic("t1"), msg.NodeStatus{NodeID: "t1", State: msg.StateActive, Role: "tracks"})
	run(100 * time.Millisecond)
	if _, a, _ := m.Lookup("evil"); a != nil {
		t.Errorf("ungranted ACTIVE node registered: %+v", a)
	}
	if _, a, _ := m.Lookup("t1"); a == nil {
		t.Fatal("granted ACTIVE node not registered")
	}
	// Past the settling time, forged "unadopted" words about t1 change
	// nothing: one on another node's topic, one on another node's
	// announcement topic, one on the relayed topic, and an announcement on
	// t1's own (which its adopted key may not publish on).
	run(3 * time.Second)
	_ = b.Publish(msg.NodeStatusTopic("evil"), msg.NodeStatus{NodeID: "t1", State: msg.StateUnadopted})
	_ = b.Publish(msg.NodeAnnounceTopic("evil"), msg.NodeGPIOStatus{NodeID: "t1"})
	_ = b.Publish(msg.TopicUnadopted, msg.NodeGPIOStatus{NodeID: "t1"})
	_ = b.Publish(msg.NodeAnnounceTopic("t1"), msg.NodeGPIOStatus{NodeID: "t1"})
	run(100 * time.Millisecond)
	if _, a, _ := m.Lookup("t1"); a == nil || access.roles["t1"] != "tracks" {
		t.Fatalf("forged words cleared t1's adoption (grant %q)", access.roles["t1"])
	}
	// Its own status saying so does clear it, and revokes the grant.
	_ = b.Publish(msg.NodeStatusTopic("t1"), msg.NodeStatus{NodeID: "t1", State: msg.StateUnadopted})
	run(100 * time.Millisecond)
	if _, a, _ := m.Lookup("t1"); a != nil || access.roles["t1"] != "" {
		t.Errorf("t1 reset itself but is still adopted %+v, granted %q", a, access.roles["t1"])
	}

	validate := func(id, role string) msg.ValidateRoleResponse {
		var resp msg.ValidateRoleResponse
		done := false
		ex.Post(func() {
			m.serveValidate(msg.NodeValidateRoleService(id), msg.ValidateRoleRequest{NodeID: id, Role: role}, func(r msg.ValidateRoleResponse, _ error) { resp, done = r, true })
		})
		run(10 * time.Millisecond)
		if !done {
			t.Fatal("validate_role not answered")
		}
		return resp
	}
	if r := validate("evil", "head"); r.Valid {
		t.Error("a stored role nobody granted was validated")
	}
	if _, a, _ := m.Lookup("evil"); a != nil {
		t.Error("validate_role registered an ungranted node")
	}
	if r := validate("old", "head"); !r.Valid || access.roles["old"] != "head" {
		t.Errorf("a node from the registry before authentication: %+v, granted %q", r, access.roles["old"])
	}
}

// An announcement counts only on the announcing node's own topic (the one
// an authenticated bus lets only that node publish on), and the server
// relays it, checked, on the topic the spec names for announcements.
func TestAnnouncementsCountOnTheirOwnTopic(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	m, err := New(Options{Exec: ex, Bus: b})
	if err != nil {
		t.Fatal(err)
	}
	var relayed []string
	if _, err := bus.SubscribeJSON(b, msg.TopicUnadopted, bus.QoS{Depth: 100}, ex, func(_ string, st msg.NodeGPIOStatus) {
		relayed = append(relayed, st.NodeID)
	}); err != nil {
		t.Fatal(err)
	}
	ex.Post(func() {
		if err := m.Start(); err != nil {
			t.Error(err)
		}
	})
	run := func(d time.Duration) {
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	run(0)
	_ = b.Publish(msg.NodeAnnounceTopic("real"), msg.NodeGPIOStatus{NodeID: "real", FirmwareVersion: "1.0.0"})
	_ = b.Publish(msg.NodeAnnounceTopic("evil"), msg.NodeGPIOStatus{NodeID: "victim", FirmwareVersion: "6.6.6"})
	run(100 * time.Millisecond)
	var listed []string
	for _, u := range m.Unadopted() {
		listed = append(listed, u.NodeID)
	}
	if !slices.Equal(listed, []string{"real"}) {
		t.Errorf("unadopted %v, want [real]", listed)
	}
	if !slices.Equal(relayed, []string{"real"}) {
		t.Errorf("relayed on %s: %v, want [real]", msg.TopicUnadopted, relayed)
	}
}

// A node validates its role and fetches a role configuration on its own
// per-node services, which an authenticated bus lets only its key call:
// the server takes the node from the name, refuses a request naming
// another node, gives a configuration only for the node's own role, and
// refuses the shared names of older firmware with a message to update.
func TestNodesSpeakOnlyForThemselves(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	dir := t.TempDir()
	registry := []byte(`[{"node_id":"h1","role":"head","display_name":"Head","adopted_at":"2026-01-01T00:00:00Z"}]`)
	if err := os.WriteFile(filepath.Join(dir, "adopted.json"), registry, 0o600); err != nil {
		t.Fatal(err)
	}
	repo, err := firmware.Open(t.TempDir(), filepath.Join("..", "..", "fixtures", "config", "roles"))
	if err != nil {
		t.Fatal(err)
	}
	access := &fakeAccess{roles: map[string]string{"h1": "head"}}
	m, err := New(Options{Exec: ex, Bus: b, DataDir: dir, Access: access, Firmware: repo})
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
	call := func(service string, req, resp any) error {
		var out error
		done := false
		b.CallAsync(service, req, time.Second, ex, func(mm bus.Msg, err error) {
			if err == nil {
				err = mm.Decode(resp)
			}
			out, done = err, true
		})
		run(10 * time.Millisecond)
		if !done {
			t.Fatalf("%s not answered", service)
		}
		return out
	}
	online := func() bool { _, a, _ := m.Lookup("h1"); return a != nil && a.Online }

	// "evil" (an unadopted node, or another adopted one) validating and
	// fetching as h1, on its own per-node service: refused, nothing changes.
	var vr msg.ValidateRoleResponse
	err = call(msg.NodeValidateRoleService("evil"), msg.ValidateRoleRequest{NodeID: "h1", Role: "head"}, &vr)
	if err == nil || !strings.Contains(err.Error(), "a node may ask only for itself") {
		t.Errorf("evil validating as h1: %+v, %v; want refused", vr, err)
	}
	if vr.Valid || vr.Config != "" || online() {
		t.Errorf("evil validating as h1: %+v, h1 online %v", vr, online())
	}
	var cr msg.RoleConfigResponse
	if err := call(msg.NodeRoleConfigService("evil"), msg.RoleConfigRequest{NodeID: "h1", Role: "head"}, &cr); err == nil || cr.Config != "" {
		t.Errorf("evil fetching as h1: %+v, %v; want refused", cr, err)
	}
	// Without naming h1, evil gets no role it is not adopted into.
	cr = msg.RoleConfigResponse{}
	if err := call(msg.NodeRoleConfigService("evil"), msg.RoleConfigRequest{Role: "head"}, &cr); err != nil || cr.Success || cr.Config != "" ||
		!strings.Contains(cr.Message, "evil is not being adopted as head") {
		t.Errorf("evil fetching the head's configuration: %+v, %v; want refused", cr, err)
	}
	vr = msg.ValidateRoleResponse{}
	if err := call(msg.NodeValidateRoleService("evil"), msg.ValidateRoleRequest{Role: "head"}, &vr); err != nil || vr.Valid || vr.Config != "" {
		t.Errorf("evil validating a head role of its own: %+v, %v; want invalid", vr, err)
	}
	if online() {
		t.Error("h1 marked online by another node")
	}
	// The shared names of older firmware: an error that says what to do
	// (and clears no stored role, as an invalid answer would).
	for _, old := range []string{msg.LegacyServiceValidateRole, msg.LegacyServiceRoleConfig} {
		var resp map[string]any
		err := call(old, map[string]any{"node_id": "h1", "role": "head"}, &resp)
		var re *bus.RemoteError
		if !errors.As(err, &re) || !strings.Contains(re.Message, "update this node's firmware") {
			t.Errorf("%s: %v, %v; want a refusal telling the node to update", old, resp, err)
		}
	}
	if online() {
		t.Error("h1 marked online through an old shared service")
	}

	// h1 itself: its role validates, with the configuration, and it may
	// fetch its own role's configuration but no other.
	vr = msg.ValidateRoleResponse{}
	if err := call(msg.NodeValidateRoleService("h1"), msg.ValidateRoleRequest{NodeID: "h1", Role: "head"}, &vr); err != nil || !vr.Valid || vr.Config == "" {
		t.Errorf("h1 validating its own role: %+v, %v", vr, err)
	}
	if !online() {
		t.Error("h1 not online after validating its role")
	}
	cr = msg.RoleConfigResponse{}
	if err := call(msg.NodeRoleConfigService("h1"), msg.RoleConfigRequest{Role: "head"}, &cr); err != nil || !cr.Success || !strings.Contains(cr.Config, "role: head") {
		t.Errorf("h1 fetching its own configuration: %+v, %v", cr.Message, err)
	}
	cr = msg.RoleConfigResponse{}
	if err := call(msg.NodeRoleConfigService("h1"), msg.RoleConfigRequest{Role: "tracks"}, &cr); err != nil || cr.Success || cr.Config != "" {
		t.Errorf("h1 fetching the tracks' configuration: %+v, %v; want refused", cr.Message, err)
	}
}

// A second adoption of a node while the first waits for the node is
// refused, naming the role it is being adopted as; the first completes,
// and once it has, the node is adopted as the first asked.
func TestSecondAdoptionWaitsForTheFirst(t *testing.T) {
	ex := executor.NewVirtual()
	b := mem.New()
	m, err := New(Options{Exec: ex, Bus: b, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	run := func(d time.Duration) {
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	// The node answers its adopt service a second after it is called.
	if _, err := bus.ServeJSON(b, msg.NodeAdoptService("n1"), ex, func(req msg.AdoptNodeRequest, reply func(msg.AdoptNodeResponse, error)) {
		ex.After(time.Second, func() {
			reply(msg.AdoptNodeResponse{Success: true, AssignedTopicPrefix: msg.TopicPrefix(req.Role, req.Instance)}, nil)
		})
	}); err != nil {
		t.Fatal(err)
	}
	ex.Post(func() {
		if err := m.Start(); err != nil {
			t.Error(err)
		}
	})
	run(0)
	_ = b.Publish(msg.NodeAnnounceTopic("n1"), msg.NodeGPIOStatus{NodeID: "n1", FirmwareVersion: "1.0.0"})
	run(100 * time.Millisecond)

	type result struct {
		resp msg.AdoptNodeResponse
		err  error
		done bool
	}
	var first, second result
	ex.Post(func() {
		m.Adopt(msg.AdoptNodeRequest{NodeID: "n1", Role: "head"}, func(r msg.AdoptNodeResponse, err error) { first = result{r, err, true} })
	})
	run(100 * time.Millisecond)
	ex.Post(func() {
		m.Adopt(msg.AdoptNodeRequest{NodeID: "n1", Role: "tracks"}, func(r msg.AdoptNodeResponse, err error) { second = result{r, err, true} })
	})
	run(100 * time.Millisecond)
	var pe *ParamError
	if !second.done || !errors.As(second.err, &pe) || pe.Field != "node_id" || !strings.Contains(second.err.Error(), "being adopted as head") {
		t.Fatalf("second adoption while the first waits: %+v, want refused on node_id naming head", second)
	}
	run(2 * time.Second)
	if !first.done || first.err != nil || !first.resp.Success {
		t.Fatalf("first adoption: %+v", first)
	}
	if _, a, _ := m.Lookup("n1"); a == nil || a.Role != "head" {
		t.Errorf("n1 adopted as %+v, want head", a)
	}
}
