package robot

import (
	"fmt"

	drv "github.com/saint-os/saint/hal/device/mitmotor"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/model/limb"
	"github.com/saint-os/saint/sim/twin/mitmotor"
)

// LimbPart is the part (and board) of a humanoid limb: "limb_leg_left".
func LimbPart(instance string) Part { return Part("limb_" + instance) }

// simLimb is a humanoid limb: its model and its joints' actuator twins,
// ids 1… on its board's can0.
type simLimb struct {
	part      Part
	model     *limb.Limb
	actuators []*mitmotor.Device
}

// addLimbs builds the limbs of Options.Limbs: a board with the limb_can
// profile each, the limb's model, and an actuator twin per joint.
func (r *Robot) addLimbs(o Options) error {
	for _, inst := range o.Limbs {
		p, err := limb.Humanoid(inst)
		if err != nil {
			return fmt.Errorf("robot: Options.Limbs: %w", err)
		}
		part := LimbPart(inst)
		if r.boards[part] != nil {
			return fmt.Errorf("robot: Options.Limbs: %s twice", inst)
		}
		id := o.NodeIDs[part]
		if id == "" {
			id = DefaultNodeID(part)
		}
		b, err := simboard.New(&simboard.Options{Profile: simboard.LimbCAN, NodeID: id, Exec: o.Exec, Seed: subSeed(o.Seed, string(part))})
		if err != nil {
			return fmt.Errorf("robot: %s board: %w", part, err)
		}
		b.SetRecording(false)
		r.boards[part] = b
		m, err := limb.New(p)
		if err != nil {
			return err
		}
		bus, err := b.CANBus("can0")
		if err != nil {
			return err
		}
		l := &simLimb{part: part, model: m}
		for i, j := range p.Joints {
			mo, err := drv.ModelNamed(j.Actuator)
			if err != nil {
				return fmt.Errorf("robot: %s %s: %w", part, j.Name, err)
			}
			d, err := mitmotor.New(bus, r.ex, mitmotor.Options{ID: uint8(i + 1), Model: mo})
			if err != nil {
				return fmt.Errorf("robot: %s actuator %d: %w", part, i+1, err)
			}
			d.SetState(m.MotorState(i))
			l.actuators = append(l.actuators, d)
		}
		r.limbs = append(r.limbs, l)
	}
	return nil
}

// Limb returns a humanoid limb's model (instance "leg_left" …), nil when
// the robot has none of that name.
func (r *Robot) Limb(instance string) *limb.Limb {
	for _, l := range r.limbs {
		if l.part == LimbPart(instance) {
			return l.model
		}
	}
	return nil
}

// LimbActuator returns joint i's actuator twin of a humanoid limb, nil
// when there is none.
func (r *Robot) LimbActuator(instance string, i int) *mitmotor.Device {
	for _, l := range r.limbs {
		if l.part == LimbPart(instance) && i >= 0 && i < len(l.actuators) {
			return l.actuators[i]
		}
	}
	return nil
}

// readLimbs drives each limb's joints with the torques its actuators
// computed.
func (r *Robot) readLimbs() {
	for _, l := range r.limbs {
		for i, d := range l.actuators {
			l.model.SetMotorTorque(i, d.Torque())
		}
	}
}

// writeLimbs reports each limb's joints to their actuators.
func (r *Robot) writeLimbs() {
	for _, l := range r.limbs {
		for i, d := range l.actuators {
			d.SetState(l.model.MotorState(i))
		}
	}
}

// limbDisturbances registers each limb actuator's CAN link and each
// joint's motor as disturbance targets ("limb_leg_left/can/4",
// "limb_leg_left/knee").
func (r *Robot) limbDisturbances() {
	w := r.world
	for _, l := range r.limbs {
		m := l.model
		for i, d := range l.actuators {
			w.AddLink(fmt.Sprintf("%s/can/%d", l.part, d.ID()), func(c bool) error { d.SetConnected(c); return nil })
			w.AddDevice(fmt.Sprintf("%s/%s", l.part, m.Params().Joints[i].Name), func(dead bool) { m.SetDead(i, dead) })
		}
	}
}
