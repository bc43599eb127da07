package cyclone

import (
	"encoding/binary"
	"fmt"
)

// ROS 2's graph topic: every rmw implementation publishes on it, per
// participant, the nodes the participant holds and the GIDs of each
// node's readers and writers (rmw_dds_common's ParticipantEntitiesInfo),
// which is how `ros2 node list` and `ros2 node info` know a node.
const (
	GraphTopic = "ros_discovery_info"
	GraphType  = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"
)

// GraphQoS is rmw's for GraphTopic: reliable, transient local, keep last
// 1, so that a tool started later gets every participant's latest.
var GraphQoS = QoS{Reliable: true, Depth: 1, TransientLocal: true}

// GIDSize is the size of rmw_dds_common's Gid in ROS 2 Humble (char[24]):
// rmw_cyclonedds_cpp puts an entity's 16-byte GUID in it, zero-padded.
const GIDSize = 24

type graph struct {
	namespace, name string
	w               *Writer
}

// AnnounceNode publishes on ros_discovery_info that the participant holds
// one ROS 2 node, namespace and name ("/", "saint_bridge"), whose readers
// and writers are every one the participant has made and makes from now
// on (each new one republishes it), as rmw_cyclonedds_cpp does for a
// node's. The graph writer itself belongs to no node, as in rmw.
func (p *Participant) AnnounceNode(namespace, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.graph != nil {
		return fmt.Errorf("cyclone: the participant already announces node %s%s", p.graph.namespace, p.graph.name)
	}
	w, err := p.newWriter(GraphTopic, GraphType, GraphQoS)
	if err != nil {
		return err
	}
	p.graph = &graph{namespace: namespace, name: name, w: w}
	return p.publishGraph()
}

// graphChanged republishes the graph after an endpoint was made (p.mu
// held). A failure is not the endpoint's: it stays, and the next change
// publishes again.
func (p *Participant) graphChanged() {
	if p.graph != nil {
		_ = p.publishGraph()
	}
}

func (p *Participant) publishGraph() error {
	self, err := p.GUID()
	if err != nil {
		return err
	}
	return p.graph.w.Write(EncodeParticipantEntitiesInfo(self, []NodeEntities{{
		Namespace: p.graph.namespace, Name: p.graph.name, Readers: p.readerGUIDs, Writers: p.writerGUIDs,
	}}))
}

// NodeEntities is one node of a ParticipantEntitiesInfo.
type NodeEntities struct {
	Namespace, Name  string
	Readers, Writers []GUID
}

// EncodeParticipantEntitiesInfo is the XCDR1 little-endian sample (with
// its encapsulation header) of rmw_dds_common's ParticipantEntitiesInfo
// as Humble defines it: the participant's Gid, then per node its
// namespace, name, reader Gids and writer Gids.
func EncodeParticipantEntitiesInfo(participant GUID, nodes []NodeEntities) []byte {
	b := []byte{0, 1, 0, 0} // CDR_LE
	// Alignment counts from the end of the encapsulation header.
	align := func(n int) {
		for (len(b)-4)%n != 0 {
			b = append(b, 0)
		}
	}
	u32 := func(v int) {
		align(4)
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	gid := func(g GUID) {
		b = append(b, g[:]...)
		b = append(b, make([]byte, GIDSize-len(g))...)
	}
	str := func(s string) {
		u32(len(s) + 1)
		b = append(append(b, s...), 0)
	}
	gid(participant)
	u32(len(nodes))
	for _, n := range nodes {
		str(n.Namespace)
		str(n.Name)
		u32(len(n.Readers))
		for _, g := range n.Readers {
			gid(g)
		}
		u32(len(n.Writers))
		for _, g := range n.Writers {
			gid(g)
		}
	}
	return b
}
