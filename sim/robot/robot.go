package robot

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/board"
	ft "github.com/saint-os/saint/hal/device/feetech"
	pcadrv "github.com/saint-os/saint/hal/device/pca9685"
	"github.com/saint-os/saint/hal/executor"
	simboard "github.com/saint-os/saint/sim/board"
	"github.com/saint-os/saint/sim/model/arm"
	"github.com/saint-os/saint/sim/model/balance"
	"github.com/saint-os/saint/sim/model/head"
	"github.com/saint-os/saint/sim/model/servo"
	"github.com/saint-os/saint/sim/model/tracks"
	"github.com/saint-os/saint/sim/twin/bts7960"
	simcam "github.com/saint-os/saint/sim/twin/camera"
	"github.com/saint-os/saint/sim/twin/encoder"
	"github.com/saint-os/saint/sim/twin/feetech"
	"github.com/saint-os/saint/sim/twin/mitmotor"
	"github.com/saint-os/saint/sim/twin/mpu6050"
	"github.com/saint-os/saint/sim/twin/qmi8658"
	"github.com/saint-os/saint/sim/twin/vesc"
	"github.com/saint-os/saint/sim/world"
)

// Part names a simulated node of the robot.
type Part string

// The robot's parts, one simulated board each.
const (
	HeadPart      Part = "head"
	ArmsLeftPart  Part = "arms_left"
	ArmsRightPart Part = "arms_right"
	TracksPart    Part = "tracks"
	ConsolePart   Part = "console"
	BalancePart   Part = "balance"
)

// Parts lists the parts in the order the robot builds them.
func Parts() []Part {
	return []Part{HeadPart, ArmsLeftPart, ArmsRightPart, TracksPart, ConsolePart, BalancePart}
}

// DefaultNodeID returns the node id a part's board gets by default:
// "sim-head", "sim-arms-left" ..., a humanoid limb's "sim-leg-left".
func DefaultNodeID(p Part) string {
	switch p {
	case ArmsLeftPart:
		return "sim-arms-left"
	case ArmsRightPart:
		return "sim-arms-right"
	}
	if inst, ok := strings.CutPrefix(string(p), "limb_"); ok {
		return "sim-" + strings.ReplaceAll(inst, "_", "-")
	}
	return "sim-" + string(p)
}

// Pins and ids of the harness (see the package doc and sim/board).
const (
	HeadPanPin, HeadTiltPin = 12, 13
	// HeadRollChannel is the roll servo's channel on the head's PCA9685
	// (simboard.HeadPCA9685).
	HeadRollChannel = 0

	// The BTS7960 PWM inputs are channels of the tracks' PCA9685
	// (simboard.TracksPCA9685); the enables are GPIOs.
	TracksLeftRPWMCh, TracksLeftLPWMCh, TracksLeftEnable    = 0, 1, 5
	TracksRightRPWMCh, TracksRightLPWMCh, TracksRightEnable = 2, 3, 6
	// TracksPWMHz is what the tracks' PCA9685 runs at: its fastest,
	// 25 MHz / (4096 × 4).
	TracksPWMHz                      = 1526
	TracksLeftEncA, TracksLeftEncB   = 17, 27
	TracksRightEncA, TracksRightEncB = 22, 23

	VESCLeftID, VESCRightID = 68, 56
	// FeetechGripperID is the gripper's id; joints are 1–5.
	FeetechGripperID = 6

	// ArmSupplyV is the arms' servo supply, V.
	ArmSupplyV = 12.0
)

// Options configures a Robot.
type Options struct {
	// Exec runs the physics, the twins' timers and (given to the nodes)
	// everything else. It should run on a virtual clock for determinism.
	Exec *executor.Executor
	// Bus, when set, carries ground truth and the disturbance service.
	Bus bus.Bus
	// Seed seeds the world and, through it, every sensor's noise.
	Seed uint64
	// Step is the physics step; 0 means 1 ms.
	Step time.Duration
	// TruthRate is the ground truth rate, Hz; 0 means 50, negative none.
	TruthRate float64
	// NodeIDs overrides the boards' node ids (DefaultNodeID otherwise).
	NodeIDs map[Part]string
	// Hash keeps the world's trajectory hash (world.Options.Hash).
	Hash bool
	// CANArms puts both arms' joints on torque-controlled MIT-mode CAN
	// actuators (boards with the arms_can profile, actuators 1–5 on can0;
	// the gripper stays a Feetech servo, id 6 on the UART).
	CANArms bool
	// Limbs adds a humanoid's limbs (sim/model/limb's instances:
	// leg_left, leg_right, arm_left, arm_right, neck), hanging from a torso
	// fixed on a test stand: a board each (part LimbPart(instance),
	// profile limb_can) with the joints' MIT-mode actuators 1… on can0.
	Limbs []string
}

// Robot is the simulated robot.
type Robot struct {
	ex    *executor.Executor
	world *world.World

	Head    *head.Head
	Arms    [2]*arm.Arm // left, right
	Tracks  *tracks.Tracks
	Balance *balance.Balance

	boards map[Part]*simboard.Board

	headPWMCut [3]bool

	feetech    [2]*feetech.Bus
	present    [2][FeetechGripperID]ft.Present // last reported, to skip unchanged updates
	timedSpeed [2][FeetechGripperID]float64    // rad/s of a move given a goal time
	bridges    [2]*bts7960.Bridge
	encoder    [2]*encoder.Encoder
	encCut     [2]bool
	vesc       [2]*vesc.Device
	vescI      [2]float64                         // integral of the speed loops, A
	actuators  [2][arm.NumJoints]*mitmotor.Device // with Options.CANArms
	limbs      []*simLimb                         // with Options.Limbs
}

// New builds the robot: boards, twins, models, and the world that steps
// them. Call Start to start stepping.
func New(o Options) (*Robot, error) {
	if o.Exec == nil {
		return nil, fmt.Errorf("robot: Options.Exec: want an executor")
	}
	w := world.New(o.Exec, world.Options{Step: o.Step, Seed: o.Seed, Bus: o.Bus, TruthRate: o.TruthRate, Hash: o.Hash})
	r := &Robot{ex: o.Exec, world: w, boards: map[Part]*simboard.Board{}}
	for _, p := range Parts() {
		id := o.NodeIDs[p]
		if id == "" {
			id = DefaultNodeID(p)
		}
		prof := simboard.Profile(p)
		if p == ArmsLeftPart || p == ArmsRightPart {
			prof = simboard.Arms
			if o.CANArms {
				prof = simboard.ArmsCAN
			}
		}
		b, err := simboard.New(&simboard.Options{Profile: prof, NodeID: id, Exec: o.Exec, Seed: subSeed(o.Seed, string(p))})
		if err != nil {
			return nil, fmt.Errorf("robot: %s board: %w", p, err)
		}
		// The robot runs for as long as the simulation: no records of
		// every pin change and CAN frame.
		b.SetRecording(false)
		r.boards[p] = b
	}
	r.Head = head.New(head.Default(), nil) // the MPU6050 twin adds the noise
	r.Arms[0] = arm.New(arm.Default("left"))
	r.Arms[1] = arm.New(arm.Default("right"))
	if o.CANArms {
		for side, name := range []string{"left", "right"} {
			p, err := CANArmParams(name)
			if err != nil {
				return nil, err
			}
			r.Arms[side] = arm.New(p)
		}
	}
	r.Tracks = tracks.New(tracks.Default())
	r.Balance = balance.New(balance.Default(), nil) // the QMI8658 twin adds the noise

	if err := r.wireTwins(o.CANArms); err != nil {
		return nil, err
	}
	if err := r.addLimbs(o); err != nil {
		return nil, err
	}
	models := []world.Model{
		world.Func{ModelName: "inputs", StepFunc: func(float64) { r.readInputs() }},
		r.Head, r.Arms[0], r.Arms[1],
		world.Func{ModelName: "arm_contact", StepFunc: func(float64) { arm.CheckPair(r.Arms[0], r.Arms[1]) }},
		r.Tracks, r.Balance,
	}
	for _, l := range r.limbs {
		models = append(models, l.model)
	}
	models = append(models, world.Func{ModelName: "outputs", StepFunc: func(float64) { r.writeOutputs() }})
	for _, m := range models {
		if err := w.Add(m); err != nil {
			return nil, err
		}
	}
	r.registerDisturbances()
	r.limbDisturbances()
	return r, nil
}

func subSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return seed ^ h.Sum64()
}

func (r *Robot) wireTwins(canArms bool) error {
	for side, p := range []Part{ArmsLeftPart, ArmsRightPart} {
		port, err := r.boards[p].UARTPeer(simboard.UART)
		if err != nil {
			return err
		}
		fb := feetech.New(port, nil)
		first := uint8(1)
		if canArms {
			if err := r.wireCANArm(side, p); err != nil {
				return err
			}
			first = FeetechGripperID // the joints are on CAN
		}
		for id := first; id <= FeetechGripperID; id++ {
			if _, err := fb.Add(id); err != nil {
				return fmt.Errorf("robot: %s feetech servo %d: %w", p, id, err)
			}
		}
		r.feetech[side] = fb
	}
	tb := r.boards[TracksPart]
	pca := tb.PCA9685()
	r.bridges[tracks.Left] = bts7960.New(tb, bts7960.Wiring{PWM: pca, RPWM: TracksLeftRPWMCh, LPWM: TracksLeftLPWMCh, REN: TracksLeftEnable, LEN: TracksLeftEnable})
	r.bridges[tracks.Right] = bts7960.New(tb, bts7960.Wiring{PWM: pca, RPWM: TracksRightRPWMCh, LPWM: TracksRightLPWMCh, REN: TracksRightEnable, LEN: TracksRightEnable})
	cpr := int(math.Round(r.Tracks.Params().EncoderCPR))
	r.encoder[tracks.Left] = encoder.New(encoder.BoardLine(tb, TracksLeftEncA), encoder.BoardLine(tb, TracksLeftEncB), encoder.Options{CountsPerRev: cpr})
	r.encoder[tracks.Right] = encoder.New(encoder.BoardLine(tb, TracksRightEncA), encoder.BoardLine(tb, TracksRightEncB), encoder.Options{CountsPerRev: cpr})
	can0, err := r.boards[BalancePart].CANBus("can0")
	if err != nil {
		return err
	}
	r.vesc[balance.Left] = vesc.New(can0, r.ex, vesc.Options{ID: VESCLeftID})
	r.vesc[balance.Right] = vesc.New(can0, r.ex, vesc.Options{ID: VESCRightID})
	return nil
}

// World returns the physics world.
func (r *Robot) World() *world.World { return r.world }

// Board returns a part's simulated board.
func (r *Robot) Board(p Part) *simboard.Board { return r.boards[p] }

// Feetech returns an arm's servo bus twin (0 left, 1 right).
func (r *Robot) Feetech(side int) *feetech.Bus { return r.feetech[side] }

// VESC returns a wheel's motor controller twin (0 left, 1 right).
func (r *Robot) VESC(side int) *vesc.Device { return r.vesc[side] }

// Encoder returns a track's encoder twin (0 left, 1 right).
func (r *Robot) Encoder(side int) *encoder.Encoder { return r.encoder[side] }

// Start starts stepping the world.
func (r *Robot) Start() error { return r.world.Start() }

// Stop stops stepping and closes the twins that listen on buses.
func (r *Robot) Stop() {
	r.world.Stop()
	for _, f := range r.feetech {
		f.Close()
	}
	for _, v := range r.vesc {
		v.Close()
	}
	for _, side := range r.actuators {
		for _, d := range side {
			if d != nil {
				d.Close()
			}
		}
	}
	for _, l := range r.limbs {
		for _, d := range l.actuators {
			d.Close()
		}
	}
}

// readInputs turns what the boards' drivers did into model commands.
func (r *Robot) readInputs() {
	hb := r.boards[HeadPart]
	for axis := range 3 {
		if r.headPWMCut[axis] {
			r.Head.Servo(axis).Release()
			continue
		}
		var f, d float64
		var on bool
		switch axis {
		case 0:
			f, d, on = hb.PWMState(HeadPanPin)
		case 1:
			f, d, on = hb.PWMState(HeadTiltPin)
		default:
			f, d, on = hb.PCA9685().PWMState(HeadRollChannel)
		}
		r.Head.SetPWM(axis, f, d, on)
	}
	for side, p := range []Part{ArmsLeftPart, ArmsRightPart} {
		r.readArm(side, r.boards[p])
	}
	for side, br := range r.bridges {
		out := br.Output()
		switch out.Mode {
		case bts7960.Drive:
			r.Tracks.SetDrive(side, out.Duty, true)
		case bts7960.Brake:
			r.Tracks.SetDrive(side, 0, true)
		default:
			r.Tracks.SetDrive(side, 0, false)
		}
	}
	for side, v := range r.vesc {
		r.readVESC(side, v.Command())
	}
	r.readLimbs()
}

// readArm commands an arm's joints: from a PCA9685 channel carrying a
// servo pulse, else from the Feetech servo.
func (r *Robot) readArm(side int, b *simboard.Board) {
	a, fb := r.Arms[side], r.feetech[side]
	pca := b.PCA9685()
	pulses := pca != nil && !pca.Asleep() && pca.Frequency() >= servo.MinFrameHz && pca.Frequency() <= servo.MaxFrameHz
	model := fb.Model()
	var goals [arm.NumJoints + 1]feetech.Goal
	var found [arm.NumJoints + 1]bool
	ids := [arm.NumJoints + 1]uint8{1, 2, 3, 4, 5, FeetechGripperID} // joints, gripper
	fb.Goals(ids[:], goals[:], found[:])
	first := 0
	if r.canArm() {
		r.readCANArm(side)
		first = arm.NumJoints // only the gripper is a Feetech servo
	}
	for i := first; i < arm.NumJoints+1; i++ {
		s := a.Gripper()
		if i < arm.NumJoints {
			s = a.Joint(i)
		}
		if pulses {
			if us := float64(pca.Pulse(i)) / float64(time.Microsecond); us >= servo.MinValidPulseUS && us <= servo.MaxValidPulseUS {
				s.SetTorqueEnabled(true)
				s.SetSpeedLimit(0)
				s.SetPulse(us)
				continue
			}
		}
		if !found[i] {
			s.SetTorqueEnabled(false)
			continue
		}
		g := goals[i]
		s.SetTorqueEnabled(g.Torque)
		if !g.Torque {
			continue
		}
		s.SetTorqueLimit(float64(min(g.TorqueLimit, 1000)) / 1000)
		goal := model.Radians(g.Position)
		if i == arm.NumJoints {
			// The gripper servo's full turn maps onto the fingers' travel.
			lo, hi := s.Limits()
			goal = lo + (goal/(2*math.Pi)+0.5)*(hi-lo)
		}
		// Speed: the goal speed register, or with a goal time (ms) the
		// speed that covers the move in that time, fixed when the goal
		// changes. Acceleration is not modelled.
		cur, ok := s.Goal()
		changed := !ok || cur != goal
		speed := float64(g.Speed) / model.StepsPerRadian()
		if g.Time > 0 {
			if changed {
				r.timedSpeed[side][i] = math.Abs(goal-s.Angle()) / (float64(g.Time) / 1000)
			}
			speed = r.timedSpeed[side][i]
		}
		s.SetSpeedLimit(speed)
		if changed {
			s.SetGoal(goal)
		}
	}
}

// readVESC applies a VESC's command to its wheel. Speed and position
// modes run the controller's loops here, as simple PI/P loops on current.
func (r *Robot) readVESC(side int, c vesc.Command) {
	b := r.Balance
	switch c.Mode {
	case vesc.Duty:
		b.SetWheelDuty(side, c.Value)
	case vesc.Current:
		b.SetWheelCurrent(side, c.Value)
	case vesc.Brake:
		// Brake current opposes the rotation, fading out at standstill.
		b.SetWheelCurrent(side, -math.Abs(c.Value)*math.Tanh(b.ERPM(side)/100))
	case vesc.RPM:
		const kp, ki = 0.004, 0.004 // A per ERPM, A per ERPM·s (firmware defaults' order)
		e := c.Value - b.ERPM(side)
		r.vescI[side] = clampAbs(r.vescI[side]+ki*e*r.world.Dt(), b.Params().Motor.MaxCurrent)
		b.SetWheelCurrent(side, kp*e+r.vescI[side])
	case vesc.Pos:
		const kp = 0.5 // A per degree
		pos := math.Mod(b.WheelAngle(side)*180/math.Pi, 360)
		e := math.Remainder(c.Value-pos, 360)
		b.SetWheelCurrent(side, kp*e)
	default:
		b.SetWheelCurrent(side, 0)
	}
	if c.Mode != vesc.RPM {
		r.vescI[side] = 0
	}
}

func clampAbs(v, lim float64) float64 { return math.Max(-lim, math.Min(lim, v)) }

// writeOutputs hands the models' sensor values to the twins.
func (r *Robot) writeOutputs() {
	now := r.ex.Now()
	acc, gyr := r.Head.TrueIMU()
	if d := r.boards[HeadPart].MPU6050(); d != nil {
		d.Set(mpu6050.Sample{Accel: acc, Gyro: gyr, TempC: 30})
	}
	for side, p := range []Part{ArmsLeftPart, ArmsRightPart} {
		r.writeArm(side, r.boards[p])
	}
	for side, e := range r.encoder {
		if !r.encCut[side] {
			e.SetAngle(r.Tracks.SprocketAngle(side), now)
		}
	}
	tb := r.boards[TracksPart]
	for side := 0; side < 2; side++ {
		if ina := tb.TrackINA219(side); ina != nil {
			// A bridge draws from the supply what its motor takes, by
			// power balance: negative while the motor brakes into it.
			vb := r.Tracks.BatteryVoltage()
			i := 0.0
			if vb > 0 {
				i = r.Tracks.MotorVoltage(side) * r.Tracks.MotorCurrent(side) / vb
			}
			ina.Set(vb, i)
		}
	}
	if ina := tb.INA219(); ina != nil {
		ina.Set(r.Tracks.BatteryVoltage(), r.Tracks.BatteryCurrent())
	}
	r.writeLimbs()
	acc, gyr = r.Balance.TrueIMU()
	if q := r.boards[BalancePart].QMI8658(); q != nil {
		q.Set(qmi8658.Sample{Accel: acc, Gyro: gyr, TempC: 30})
	}
	b := r.Balance
	vb := b.BatteryVoltage()
	m := b.Params().Motor
	for side, v := range r.vesc {
		w, amps := b.WheelRate(side), b.MotorCurrent(side)
		var duty, in float64
		if vb > 0 {
			duty = clampAbs((m.R*amps+m.Ke*w)/vb, 1)
			in = (m.R*amps*amps + m.Ke*w*amps) / vb
		}
		elecRev := b.WheelAngle(side) / (2 * math.Pi) * float64(m.PolePairs)
		v.SetState(vesc.State{
			ERPM: b.ERPM(side), MotorCurrent: amps, Duty: duty, InputCurrent: in, InputVoltage: vb,
			TempFET: 35, TempMotor: 40, Tachometer: int32(math.Round(6 * elecRev)),
			PIDPos: math.Mod(math.Mod(b.WheelAngle(side)*180/math.Pi, 360)+360, 360),
		})
	}
}

// writeArm reports an arm's joints on its servo bus and its supply on the
// INA219 (12 V rail; each servo draws up to its 2.7 A stall current in
// proportion to its torque, plus 0.15 A for the electronics).
func (r *Robot) writeArm(side int, b *simboard.Board) {
	a, fb := r.Arms[side], r.feetech[side]
	model := fb.Model()
	amps := 0.15
	first := 0
	if r.canArm() {
		amps += r.writeCANArm(side)
		first = arm.NumJoints
	}
	for i := first; i < arm.NumJoints+1; i++ {
		s := a.Gripper()
		if i < arm.NumJoints {
			s = a.Joint(i)
		}
		stall := s.Params().StallTorque
		amps += 2.7 * math.Min(1, math.Abs(s.Torque())/stall)
		pos := s.Angle()
		if i == arm.NumJoints {
			lo, hi := s.Limits()
			pos = ((pos-lo)/(hi-lo) - 0.5) * 2 * math.Pi
		}
		p := ft.Present{
			Position:    model.Steps(pos),
			Speed:       int(math.Round(s.Rate() * model.StepsPerRadian())),
			Load:        int(math.Round(-1000 * s.Torque() / stall)),
			Voltage:     ArmSupplyV,
			Temperature: 30,
			Moving:      math.Abs(s.Rate()) > 0.01,
		}
		// Unchanged (a servo holding still) needs no twin at all.
		if p == r.present[side][i] {
			continue
		}
		if fs := fb.Servo(uint8(i + 1)); fs != nil {
			r.present[side][i] = p
			fs.SetPresent(p)
		}
	}
	if ina := b.INA219(); ina != nil {
		ina.Set(ArmSupplyV-0.05*amps, amps)
	}
}

func (r *Robot) registerDisturbances() {
	w := r.world
	i2c := func(p Part, addr uint16) {
		b := r.boards[p]
		w.AddLink(fmt.Sprintf("%s/i2c/0x%02x", p, addr), func(c bool) error { return b.SetI2CConnected(addr, c) })
	}
	i2c(HeadPart, 0x68)
	i2c(ArmsLeftPart, 0x40)
	i2c(ArmsLeftPart, 0x41)
	i2c(ArmsRightPart, 0x40)
	i2c(ArmsRightPart, 0x41)
	i2c(TracksPart, 0x40)
	i2c(ConsolePart, 0x3c)
	for side, p := range []Part{ArmsLeftPart, ArmsRightPart} {
		fb := r.feetech[side]
		for id := uint8(1); id <= FeetechGripperID; id++ {
			s := fb.Servo(id)
			if s == nil {
				continue // a joint on CAN
			}
			w.AddLink(fmt.Sprintf("%s/feetech/%d", p, id), func(c bool) error { s.SetConnected(c); return nil })
		}
		// The whole bus: the cable from the Pi's UART to the first servo.
		w.AddLink(fmt.Sprintf("%s/feetech", p), func(c bool) error {
			for id := uint8(1); id <= FeetechGripperID; id++ {
				if s := fb.Servo(id); s != nil {
					s.SetConnected(c)
				}
			}
			return nil
		})
		for _, d := range r.actuators[side] {
			if d != nil {
				w.AddLink(fmt.Sprintf("%s/can/%d", p, d.ID()), func(c bool) error { d.SetConnected(c); return nil })
			}
		}
		a := r.Arms[side]
		for i := 0; i < arm.NumJoints; i++ {
			s := a.Joint(i)
			w.AddDevice(a.Name()+"/"+arm.JointName(i), s.SetDead)
		}
		w.AddDevice(a.Name()+"/gripper", a.Gripper().SetDead)
	}
	for side, v := range r.vesc {
		v := v
		w.AddLink(fmt.Sprintf("balance/can/%d", v.ID()), func(c bool) error { v.SetConnected(c); return nil })
		s := side
		w.AddDevice([]string{"balance/left_motor", "balance/right_motor"}[side], func(d bool) { r.Balance.SetWheelDead(s, d) })
	}
	tb := r.boards[TracksPart]
	for side, name := range []string{"left", "right"} {
		s := side
		pins := [2][2]int{{TracksLeftEncA, TracksLeftEncB}, {TracksRightEncA, TracksRightEncB}}[side]
		w.AddLink("tracks/encoder/"+name, func(c bool) error {
			r.encCut[s] = !c
			if !c {
				// The cable is out: the lines float to the inputs' pulls.
				for _, pin := range pins {
					if err := tb.ReleaseInput(pin); err != nil {
						return err
					}
				}
			}
			return nil
		})
		w.AddDevice("tracks/"+name+"_motor", func(d bool) { r.Tracks.SetMotorDead(s, d) })
	}
	for axis, name := range []string{"pan", "tilt", "roll"} {
		a := axis
		w.AddLink("head/pwm/"+name, func(c bool) error { r.headPWMCut[a] = !c; return nil })
		w.AddDevice("head/"+name, r.Head.Servo(axis).SetDead)
	}
}

// TracksPWM opens the tracks' PCA9685 the way the tracks role does (every
// channel off, at TracksPWMHz), for tests and tools that drive the bridges
// directly: SetDuty(TracksLeftRPWMCh, 0.5) with the left enable high drives
// the left track forward.
func TracksPWM(hw board.Hardware) (*pcadrv.Dev, error) {
	bus, err := hw.I2C(1)
	if err != nil {
		return nil, err
	}
	return pcadrv.New(bus, &pcadrv.Opts{Addr: simboard.TracksPCA9685, FreqHz: TracksPWMHz})
}

// NodeBoard is the board a node on part runs on: Board(p), and for the
// head also its camera (a board.Board that is a camera.Provider), which
// renders the simulated scene from the head's pose.
func (r *Robot) NodeBoard(p Part) board.Board {
	b := r.boards[p]
	if p == HeadPart {
		return simboard.WithCamera(b, simcam.New(r.Head.Angles, nil))
	}
	return b
}
