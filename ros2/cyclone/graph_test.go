package cyclone

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/saint-os/saint/ros2"
)

// graphOf decodes a ParticipantEntitiesInfo sample with the interface
// definitions (ros2/std/rmw_dds_common, Humble's): the participant's GID
// and, per node, "ns name", reader GIDs and writer GIDs.
func graphOf(t *testing.T, reg *ros2.Registry, cdr []byte) (participant []byte, nodes []string, readers, writers [][][]byte) {
	t.Helper()
	m, _ := reg.Message("rmw_dds_common/ParticipantEntitiesInfo")
	v, _, err := reg.Decode(m, cdr)
	if err != nil {
		t.Fatal(err)
	}
	gid := func(x any) []byte {
		var out []byte
		for _, b := range x.(map[string]any)["data"].([]any) {
			out = append(out, byte(b.(uint64)))
		}
		return out
	}
	gids := func(x any) [][]byte {
		var out [][]byte
		for _, g := range x.([]any) {
			out = append(out, gid(g))
		}
		return out
	}
	for _, n := range v["node_entities_info_seq"].([]any) {
		n := n.(map[string]any)
		nodes = append(nodes, n["node_namespace"].(string)+" "+n["node_name"].(string))
		readers = append(readers, gids(n["reader_gid_seq"]))
		writers = append(writers, gids(n["writer_gid_seq"]))
	}
	return gid(v["gid"]), nodes, readers, writers
}

func gidOf(g GUID) []byte { return append(g[:], make([]byte, GIDSize-len(g))...) }

// TestAnnounceNode: another participant reads, on ros_discovery_info
// (transient local, so after the fact), the node /saint_bridge with the
// GIDs of exactly the readers and writers the announcing participant
// made, its GUIDs zero-padded to Humble's 24 bytes; an endpoint made
// later is announced too.
func TestAnnounceNode(t *testing.T) {
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewParticipant(testDomain)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const typ = "geometry_msgs::msg::dds_::Twist_"
	w, err := a.NewWriter("rt/graph/out", typ, QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.NewReader("rt/graph/in", typ, QoS{Reliable: true}, func([]byte) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AnnounceNode("/", "saint_bridge"); err != nil {
		t.Fatal(err)
	}
	if err := a.AnnounceNode("/", "again"); err == nil {
		t.Error("a second AnnounceNode succeeded")
	}
	b, err := NewParticipant(testDomain)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan []byte, 10)
	if _, err := b.NewReader(GraphTopic, GraphType, GraphQoS, func(d []byte) { got <- d }); err != nil {
		t.Fatal(err)
	}
	self, err := a.GUID()
	if err != nil {
		t.Fatal(err)
	}
	next := func() []byte {
		t.Helper()
		select {
		case d := <-got:
			return d
		case <-time.After(10 * time.Second):
			t.Fatal("nothing on ros_discovery_info")
		}
		return nil
	}
	pp, nodes, readers, writers := graphOf(t, reg, next())
	if !bytes.Equal(pp, gidOf(self)) {
		t.Errorf("participant GID %x, want %x", pp, gidOf(self))
	}
	if !slices.Equal(nodes, []string{"/ saint_bridge"}) {
		t.Fatalf("nodes %v, want [/ saint_bridge]", nodes)
	}
	if len(readers[0]) != 1 || !bytes.Equal(readers[0][0], gidOf(r.GUID())) || len(writers[0]) != 1 || !bytes.Equal(writers[0][0], gidOf(w.GUID())) {
		t.Errorf("readers %x writers %x, want [%x] and [%x]", readers[0], writers[0], gidOf(r.GUID()), gidOf(w.GUID()))
	}
	if rg := r.GUID(); rg == w.GUID() || !bytes.Equal(rg[:12], self[:12]) {
		t.Errorf("GUIDs: reader %x, writer %x, participant %x: want distinct, with the participant's prefix", r.GUID(), w.GUID(), self)
	}

	w2, err := a.NewWriter("rt/graph/later", typ, QoS{Reliable: true})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, writers = graphOf(t, reg, next())
	if len(writers[0]) != 2 || !bytes.Equal(writers[0][1], gidOf(w2.GUID())) {
		t.Errorf("after a new writer: writers %x, want it (%x) added", writers[0], gidOf(w2.GUID()))
	}
}

// TestEncodeParticipantEntitiesInfoIsTheInterfaces: the hand-made bytes
// are what the CDR encoder makes of the same values from the interface
// definitions.
func TestEncodeParticipantEntitiesInfoIsTheInterfaces(t *testing.T) {
	reg, err := ros2.Load()
	if err != nil {
		t.Fatal(err)
	}
	pp := GUID{1, 16, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 1, 0xc1}
	r1, w1, w2 := GUID{1, 2, 3}, GUID{4, 5, 6}, GUID{7, 8, 9}
	got := EncodeParticipantEntitiesInfo(pp, []NodeEntities{{Namespace: "/", Name: "saint_bridge", Readers: []GUID{r1}, Writers: []GUID{w1, w2}}, {Namespace: "/x", Name: "n"}})
	gid := func(g GUID) map[string]any {
		var d []any
		for _, b := range gidOf(g) {
			d = append(d, uint64(b))
		}
		return map[string]any{"data": d}
	}
	m, _ := reg.Message("rmw_dds_common/ParticipantEntitiesInfo")
	want, err := reg.Encode(m, map[string]any{"gid": gid(pp), "node_entities_info_seq": []any{
		map[string]any{"node_namespace": "/", "node_name": "saint_bridge", "reader_gid_seq": []any{gid(r1)}, "writer_gid_seq": []any{gid(w1), gid(w2)}},
		map[string]any{"node_namespace": "/x", "node_name": "n", "reader_gid_seq": []any{}, "writer_gid_seq": []any{}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, want)
	}
}
