package scene

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/viz/plot"
)

// Pose is a planar pose: metres and radians (counter-clockwise from x).
type Pose struct{ X, Y, Heading float64 }

// TrailLength is the most poses a trail keeps; TrailSpacing (m) is how far
// the robot moves before the next is added.
const (
	TrailLength  = 2000
	TrailSpacing = 0.01
)

// Trail is a bounded list of poses, oldest first.
type Trail []Pose

func (t *Trail) add(p Pose) {
	if n := len(*t); n > 0 && math.Hypot(p.X-(*t)[n-1].X, p.Y-(*t)[n-1].Y) < TrailSpacing {
		return
	}
	*t = append(*t, p)
	if len(*t) > TrailLength {
		*t = append((*t)[:0], (*t)[len(*t)-TrailLength:]...)
	}
}

// simSnapshot is the "sim" topic: the world's clock and each model's truth.
type simSnapshot struct {
	World    *msg.SimWorld   `json:"world"`
	Tracks   *msg.SimTracks  `json:"tracks"`
	Balance  *msg.SimBalance `json:"balance"`
	Head     *msg.SimHead    `json:"head"`
	ArmLeft  *msg.SimArm     `json:"arm_left"`
	ArmRight *msg.SimArm     `json:"arm_right"`
}

// Scene is the robot as the updates so far describe it. The Has* fields
// say whether a part has been heard from at all. Not safe for concurrent
// use: the window's update loop owns it.
type Scene struct {
	Now float64 // s, the newest update's server timestamp

	SimTime  float64 // s, the simulator's clock (HasSim)
	HasSim   bool
	Truth    Pose // the tracked base's ground truth pose (HasTruth)
	HasTruth bool
	Tracks   msg.SimTracks
	Odom     Pose // the tracks' odometry (HasOdom)
	HasOdom  bool

	TruthTrail, OdomTrail Trail

	TrackState    msg.TrackState
	HasTrackState bool

	BalanceTruth    msg.SimBalance
	HasBalanceTruth bool
	Balance         msg.BalanceState
	HasBalance      bool

	ArmTruth map[string]msg.SimArm   // by side
	Arms     map[string]msg.ArmState // by side, as the node reports

	// Limbs are the humanoid's limbs as their nodes report them (topic
	// joint_states: the points the server placed with the humanoid's
	// kinematics), LimbTruth as the simulator has them (topic sim, limb_*,
	// through the same kinematics); by instance ("leg_left").
	Limbs     map[string]Limb
	LimbTruth map[string]Limb

	HeadTruth    msg.SimHead
	HasHeadTruth bool
	Head         msg.HeadState
	HasHead      bool

	// Console is the console's SSD1306 display RAM (1024 bytes, page by
	// page, as the driver sends it) from topic "console", when a server
	// offers it.
	Console []byte

	Nodes     map[string]msg.NodeStatus
	Router    msg.RouteStatus
	HasRouter bool

	Series []*plot.Series // in display order
	byName map[string]*plot.Series
}

// Signals plotted, in order: name, unit.
var signals = [][2]string{
	{"balance pitch", "deg"},
	{"balance PID out", "A"},
	{"wheel speed L", "rad/s"},
	{"wheel speed R", "rad/s"},
	{"track speed L", "m/s"},
	{"track speed R", "m/s"},
	{"arm L joint error", "deg"},
	{"arm R joint error", "deg"},
}

// New returns an empty scene whose plots keep window seconds.
func New(window float64) *Scene {
	s := &Scene{ArmTruth: map[string]msg.SimArm{}, Arms: map[string]msg.ArmState{}, Nodes: map[string]msg.NodeStatus{},
		Limbs: map[string]Limb{}, LimbTruth: map[string]Limb{}, byName: map[string]*plot.Series{}}
	for _, sig := range signals {
		ser := plot.NewSeries(sig[0], sig[1], window)
		s.Series = append(s.Series, ser)
		s.byName[sig[0]] = ser
	}
	return s
}

// Signal returns the named series, nil if there is none.
func (s *Scene) Signal(name string) *plot.Series { return s.byName[name] }

func (s *Scene) sample(name string, t, v float64) { s.byName[name].Add(t, v) }

// Apply takes one state update. Unknown topics are ignored; a payload that
// does not decode is an error naming the topic.
func (s *Scene) Apply(topic string, timestamp float64, data []byte) error {
	if timestamp > s.Now {
		s.Now = timestamp
	}
	t := timestamp
	var err error
	decode := func(v any) bool {
		if e := json.Unmarshal(data, v); e != nil {
			err = fmt.Errorf("scene: topic %s: %w", topic, e)
			return false
		}
		return true
	}
	switch topic {
	case "sim":
		var snap simSnapshot
		if !decode(&snap) {
			return err
		}
		s.applySim(snap, t)
		var parts map[string]json.RawMessage
		if !decode(&parts) {
			return err
		}
		for name, raw := range parts {
			instance, ok := strings.CutPrefix(name, "limb_")
			if !ok {
				continue
			}
			var js msg.JointStates
			if e := json.Unmarshal(raw, &js); e != nil {
				return fmt.Errorf("scene: topic sim, %s: %w", name, e)
			}
			if l, ok := LimbFromJoints(instance, js.Name, js.Position); ok {
				s.LimbTruth[instance] = l
			}
		}
	case "joint_states":
		var u struct {
			Role     string       `json:"role"`
			Instance string       `json:"instance"`
			Points   [][3]float64 `json:"points"`
			Facing   *[3]float64  `json:"facing"`
		}
		if !decode(&u) {
			return err
		}
		if u.Role == msg.RoleLimb && len(u.Points) > 0 {
			l := Limb{Points: u.Points}
			if u.Facing != nil {
				l.Facing = *u.Facing
			}
			s.Limbs[u.Instance] = l
		}
	case "odom":
		var o msg.Odometry
		if !decode(&o) {
			return err
		}
		q := o.Pose.Pose.Orientation
		s.Odom = Pose{o.Pose.Pose.Position.X, o.Pose.Pose.Position.Y, Yaw(q.X, q.Y, q.Z, q.W)}
		s.HasOdom = true
		s.OdomTrail.add(s.Odom)
	case "tracks":
		if !decode(&s.TrackState) {
			return err
		}
		s.HasTrackState = true
		if !s.HasTruth {
			s.sample("track speed L", t, float64(s.TrackState.LeftVelocity))
			s.sample("track speed R", t, float64(s.TrackState.RightVelocity))
		}
	case "balance":
		if !decode(&s.Balance) {
			return err
		}
		s.HasBalance = true
		s.sample("balance PID out", t, s.Balance.PIDOut)
		if !s.HasBalanceTruth {
			s.sample("balance pitch", t, s.Balance.Pitch)
		}
	case "arms":
		var a struct {
			msg.ArmState
			Arm string `json:"arm"`
		}
		if !decode(&a) {
			return err
		}
		s.Arms[a.Arm] = a.ArmState
	case "head":
		if !decode(&s.Head) {
			return err
		}
		s.HasHead = true
	case "nodes":
		var n msg.NodeStatus
		if !decode(&n) {
			return err
		}
		if n.NodeID != "" {
			s.Nodes[n.NodeID] = n
		}
	case "console":
		var c struct {
			Framebuffer []byte `json:"framebuffer"`
		}
		if !decode(&c) {
			return err
		}
		s.Console = c.Framebuffer
	case "router":
		if !decode(&s.Router) {
			return err
		}
		s.HasRouter = true
	}
	return nil
}

func (s *Scene) applySim(snap simSnapshot, t float64) {
	if snap.World != nil {
		s.SimTime, s.HasSim = snap.World.Time, true
	}
	if tr := snap.Tracks; tr != nil {
		s.Tracks = *tr
		s.Truth = Pose{tr.X, tr.Y, tr.Heading}
		s.HasTruth = true
		s.TruthTrail.add(s.Truth)
		s.sample("track speed L", t, tr.TrackSpeed[0])
		s.sample("track speed R", t, tr.TrackSpeed[1])
	}
	if b := snap.Balance; b != nil {
		if !s.HasBalanceTruth {
			// From now on the pitch plotted is the truth's, not the
			// node's estimate: one source per plot.
			s.byName["balance pitch"] = plot.NewSeries("balance pitch", "deg", s.byName["balance pitch"].Window)
			s.Series[0] = s.byName["balance pitch"]
		}
		s.BalanceTruth, s.HasBalanceTruth = *b, true
		s.sample("balance pitch", t, b.Pitch*180/math.Pi)
		s.sample("wheel speed L", t, b.WheelRate[0])
		s.sample("wheel speed R", t, b.WheelRate[1])
	}
	if h := snap.Head; h != nil {
		s.HeadTruth, s.HasHeadTruth = *h, true
	}
	for _, a := range []*msg.SimArm{snap.ArmLeft, snap.ArmRight} {
		if a == nil {
			continue
		}
		s.ArmTruth[a.Side] = *a
		name := "arm L joint error"
		if a.Side == msg.ArmRight {
			name = "arm R joint error"
		}
		if e, ok := JointError(s.Arms[a.Side], *a); ok {
			s.sample(name, t, e)
		}
	}
}

// JointError is the largest difference in degrees between the joint
// angles a node reports and the ground truth's; ok is false when either
// has no joints.
func JointError(reported msg.ArmState, truth msg.SimArm) (deg float64, ok bool) {
	n := min(len(reported.JointPositions), len(truth.Positions))
	for i := 0; i < n; i++ {
		deg = math.Max(deg, math.Abs(float64(reported.JointPositions[i])-truth.Positions[i]*180/math.Pi))
	}
	return deg, n > 0
}

// Yaw is the rotation about z of quaternion (x, y, z, w), in radians.
func Yaw(x, y, z, w float64) float64 {
	return math.Atan2(2*(w*z+x*y), 1-2*(y*y+z*z))
}

// NodeIDs returns the known nodes' ids, sorted.
func (s *Scene) NodeIDs() []string {
	ids := make([]string, 0, len(s.Nodes))
	for id := range s.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
