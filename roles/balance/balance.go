package balance

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/device/ioboard/link"
	"github.com/saint-os/saint/hal/device/qmi8658"
	"github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart"
	"github.com/saint-os/saint/roles/balance/canmsg"
	"github.com/saint-os/saint/roles/balance/control"
	"github.com/saint-os/saint/roles/motor"
	"github.com/saint-os/saint/roles/rolekit"
)

// Balance state codes, as CAN telemetry 0x400 and the link's STATE carry
// them. Codes 2 and up are faults that hold the motors off until re-armed.
const (
	StateDisarmed uint8 = 0
	StateArmed    uint8 = 1
	StateTilt     uint8 = 2
	StateEStop    uint8 = 3
	StateWatchdog uint8 = 4
	StateRCLoss   uint8 = 5
)

var balanceStateNames = [...]string{"disarmed", "armed", "tilt", "estop", "watchdog", "rc_loss"}

// Fault bits of CAN telemetry 0x401.
const (
	FaultRCLoss     uint8 = 1 << 0
	FaultMotor      uint8 = 1 << 1 // a VESC silent for 100 ms
	FaultEStop      uint8 = 1 << 2
	FaultTilt       uint8 = 1 << 3
	FaultIMU        uint8 = 1 << 4 // IMU silent past the watchdog
	FaultLink       uint8 = 1 << 5 // IO board silent past the watchdog
	FaultCANTimeout uint8 = 1 << 6 // no Orin velocity within the CAN timeout
	FaultArmRefused uint8 = 1 << 7 // the last arming was refused
)

var balanceFaultNames = [...]string{"rc_loss", "motor", "estop", "tilt", "imu_watchdog", "link_watchdog", "can_timeout", "arm_refused"}

// LED patterns sent to the IO board.
const (
	ledIdle  = 0
	ledArmed = 1
	ledFault = 2
)

// vescStale is how long a VESC may stay silent before it counts as a motor
// fault (it broadcasts status at 50 Hz).
const vescStale = 100 * time.Millisecond

// Balance is the self-balancing base role (saul-tee): the balance board's
// logic. It reads the QMI8658 every loop period (1 kHz), runs the
// complementary filter and the balance cascade, commands the VESCs' current
// on CAN, takes the Orin's CAN commands (0x300–0x303), sends telemetry
// (0x400–0x401), and talks to the IO board over the inter-board UART (RC
// commands and faults in, state, LEDs and buzzer out). See
// docs/roles/balance.md.
type Balance struct {
	rolekit.Kit
	cfg    Config
	ex     *executor.Executor
	imu    *qmi8658.Dev
	can    can.Bus
	vesc   [2]*vesc.Controller
	link   uart.Port
	dec    *link.Decoder
	filter control.Complementary
	ctl    *control.Balancer
	pidAsm canmsg.PIDAssembler

	// Everything below runs on the executor.
	state      uint8
	faults     uint8
	mode       canmsg.Mode
	speedLimit int // %
	tiltLimit  float64
	maxSpeed   float64 // m/s

	pitch, pitchRate, yawRate float64
	speed, targetSpeed        float64
	out                       control.Outputs
	motorsOn                  bool
	lastOff                   time.Time
	imuAt, linkAt             time.Time
	imuErrors                 uint64
	gyroBias                  [3]float64
	accel, prevSpeed          float64 // m/s², m/s
	pitchAccel                float64 // rad/s²
	speedAt                   time.Time

	rc        link.RCCmd
	rcAt      time.Time
	rcArmed   bool // the armed flag of the last RC_CMD, for its edges
	ioFault   uint8
	ioFaultAt time.Time
	sensor    link.Sensor
	busEStop  bool
	// server is the server's heartbeat: while it is lost the base stops
	// driving and keeps balancing; after it returns only commands newer
	// than serverBack drive it.
	server     *rolekit.Link
	serverBack time.Time

	canVel   canmsg.Velocity
	canVelAt time.Time

	// The router's drive command and arm switch (the server's routes:
	// WebSocket, its RC receiver, a joystick).
	busSpeed, busYaw float64
	busVelAt         time.Time
	mw               *motor.Middleware // the drive's motor middleware (motor.go)
	wheelAngle       [2]float64        // rad, integrated from the wheels' speeds
	busArm           bool              // the switch's last state
	busArmSince      time.Time         // when it went on
	busArmTried      bool              // an arming attempt was made in this on-period
	busArmSeenOff    bool              // the switch was off since the last reboot
	canRx            uint64
	canTx            uint64
	canErr           uint64
	canBad           uint64
	linkTx           uint64
	linkTxE          uint64
	lastLED          uint8
	started          time.Time
	refusals         uint64

	lvl level // level calibration (level.go)
}

// Start implements rolekit.Role.
func (b *Balance) Start(env rolekit.Env) error {
	cfg, err := ConfigOf(env.Config)
	if err != nil {
		return err
	}
	b.cfg, b.ex = cfg, env.Exec
	if err := b.Begin(env, b.open); err != nil {
		return err
	}
	b.loadLevel(env.State)
	b.reboot()
	b.started = b.ex.Now()
	return nil
}

// open opens the IMU, CAN and the link, and starts the loops.
func (b *Balance) open() error {
	b.OnStop(b.release)
	hw := b.Env.Board.Hardware()
	conn, err := hw.SPI(0, 0)
	if err != nil {
		return fmt.Errorf("spi 0.0 (qmi8658): %w", err)
	}
	if b.imu, err = qmi8658.New(conn, nil); err != nil {
		return fmt.Errorf("spi 0.0 (qmi8658): %w", err)
	}
	if b.can, err = hw.CAN("can0"); err != nil {
		return fmt.Errorf("can0: %w", err)
	}
	b.vesc[0] = vesc.New(b.can, uint8(b.cfg.VESCLeftID))
	b.vesc[1] = vesc.New(b.can, uint8(b.cfg.VESCRightID))
	if b.link, err = hw.UART("ttyAMA0"); err != nil {
		return fmt.Errorf("ttyAMA0 (io board link): %w", err)
	}
	if err := b.link.Configure(uart.Config{Baud: 460800}); err != nil {
		return fmt.Errorf("ttyAMA0 (io board link): %w", err)
	}
	b.dec = link.NewDecoder(b.onLink)
	b.OnStop(b.link.Receive(func(p []byte, _ time.Time) {
		c := append([]byte(nil), p...)
		b.ex.Post(func() { b.dec.Feed(c) })
	}))
	b.OnStop(b.can.Receive(func(f can.Frame, at time.Time) {
		if !f.Extended && f.ID >= canmsg.IDVelocity && f.ID <= canmsg.IDConfig {
			b.ex.Post(func() { b.onCAN(f, at) })
		}
	}))
	prefix := b.Env.Prefix
	if prefix == "" {
		prefix = msg.TopicPrefix(msg.RoleBalance, "")
	}
	if b.Env.Bus != nil {
		if err := rolekit.Subscribe(&b.Kit, prefix+"/estop", bus.QoS{Reliability: bus.Reliable}, func(e msg.EStop) {
			b.busEStop = e.Active
		}); err != nil {
			return err
		}
		if b.server, err = b.WatchLink(b.cfg.LinkTimeout, nil, func() { b.serverBack = b.ex.Now() }); err != nil {
			return err
		}
		if err := b.openMotors(prefix); err != nil {
			return err
		}
		if err := rolekit.Subscribe(&b.Kit, prefix+"/cmd_vel", bus.QoS{Depth: 1}, func(t msg.Twist) {
			if finite(t.Linear.X) && finite(t.Angular.Z) {
				if err := b.mw.Yield(); err != nil {
					b.Env.Log.Warn("cmd_vel refused", "err", err)
					return
				}
				b.busSpeed, b.busYaw, b.busVelAt = t.Linear.X, t.Angular.Z, b.ex.Now()
			}
		}); err != nil {
			return err
		}
		if err := rolekit.Subscribe(&b.Kit, prefix+"/arm", bus.QoS{Reliability: bus.Reliable, Depth: 4}, b.onArmSwitch); err != nil {
			return err
		}
		if err := rolekit.Serve(&b.Kit, prefix+"/console", func(req msg.BalanceConsoleRequest, reply func(msg.BalanceConsoleResponse, error)) {
			out, ok := b.Console(req.Line)
			reply(msg.BalanceConsoleResponse{Output: out, OK: ok}, nil)
		}); err != nil {
			return err
		}
		if b.cfg.StateRateHz > 0 {
			b.Every(balancePeriod(b.cfg.StateRateHz), func() {
				_ = b.Env.Bus.Publish(prefix+"/state", b.State())
				b.mw.PublishState()
			})
		}
	}
	b.Every(balancePeriod(b.cfg.LoopRateHz), b.loop)
	b.Every(balancePeriod(b.cfg.TelemetryRateHz), b.sendTelemetry)
	b.Every(balancePeriod(b.cfg.LinkStateHz), b.sendLinkState)
	return nil
}

// balancePeriod is the period of a rate in Hz.
func balancePeriod(f float64) time.Duration { return time.Duration(float64(time.Second) / f) }

// Stop implements rolekit.Role: motors released, everything given back.
func (b *Balance) Stop() { b.StopAll() }

// release sets the VESCs' current to zero and disables the IMU.
func (b *Balance) release() {
	for i, v := range b.vesc {
		if v != nil {
			_ = v.SetCurrent(0)
			v.Close()
			b.vesc[i] = nil
		}
	}
	if b.imu != nil {
		_ = b.imu.Disable()
		b.imu = nil
	}
}

// reboot is the console's soft reboot and the power-on state: disarmed,
// motors off, limits from the configuration, loops reset.
func (b *Balance) reboot() {
	b.state, b.faults, b.mode = StateDisarmed, 0, canmsg.ModeBalance
	b.speedLimit, b.tiltLimit = b.cfg.SpeedLimitPct, b.cfg.TiltLimitDeg
	b.maxSpeed = b.cfg.MaxSpeedMMPS / 1000
	b.filter = control.Complementary{Tau: b.cfg.FilterTauS}
	b.ctl = control.NewBalancer(control.Params{
		Pitch:              control.Gains{Kp: b.cfg.PID.Kp, Ki: b.cfg.PID.Ki, Kd: b.cfg.PID.Kd},
		PitchIntegralLimit: b.cfg.PIDIntegralA,
		SpeedKp:            b.cfg.SpeedKp, SpeedKi: b.cfg.SpeedKi, MaxLean: b.cfg.MaxLeanDeg,
		YawKp: b.cfg.YawKp, MaxCurrent: b.cfg.MaxCurrentA,
	})
	b.rcArmed = false
	// A switch already on at power-on arms nothing: it must be seen off,
	// then held on again.
	b.busArm, b.busArmSeenOff = false, false
	b.motorsOff()
}

// loop is one iteration of the balance loop. The emergency stop is checked
// first, before anything else runs.
func (b *Balance) loop() {
	now := b.ex.Now()
	if b.estopActive(now) {
		b.faults |= FaultEStop
		b.fault(StateEStop)
	} else {
		b.faults &^= FaultEStop
	}
	dt := 1 / b.cfg.LoopRateHz
	if s, err := b.imu.Sense(); err != nil {
		b.imuErrors++
	} else {
		b.imuAt = now
		gyro := b.calibrateGyro(s.Gyro, dt)
		// The accelerometer feels the base's own acceleration as well as
		// gravity; take the wheels' out so the filter sees the lean.
		// The IMU sits imu_height_m above the axle, so the body's own
		// rotation adds a tangential (h·θ̈) and a centripetal (h·θ̇²)
		// part: take those out too.
		k := dt / (pitchAccelTau + dt)
		b.pitchAccel += k * ((gyro[1]-b.pitchRate)/dt - b.pitchAccel)
		h := b.cfg.IMUHeightM
		acc := s.Accel
		sin, cos := math.Sincos(b.pitch)
		acc[0] -= b.accel*cos + h*b.pitchAccel
		acc[2] -= b.accel*sin - h*gyro[1]*gyro[1]
		b.pitch = b.trackLevel(b.filter.Update(acc, gyro, dt), gyro, dt)
		b.pitchRate, b.yawRate = gyro[1], gyro[2]
	}
	b.updateSpeed(now)
	b.checkFaults(now)
	b.checkArmSwitch(now)
	if b.state != StateArmed {
		b.motorsOff()
		return
	}
	target, yawRate := b.command(now)
	b.targetSpeed = target
	if b.mode == canmsg.ModeManual && now.Sub(b.canVelAt) <= b.canTimeout() {
		// Manual: no balancing (the base held or on a stand), the VESCs'
		// own speed loops follow the command.
		b.drive(target, yawRate)
		return
	}
	b.out = b.ctl.Step(control.Inputs{
		Pitch: b.pitch, PitchRate: b.pitchRate, YawRate: b.yawRate, Speed: b.speed, Dt: dt,
		TargetSpeed: target, TargetYawRate: yawRate,
	})
	b.setCurrents(b.out.Left, b.out.Right)
}

// gyroBiasTau is the time constant of the gyroscope bias estimate, and
// gyroStill the rate below which the base counts as still.
const (
	gyroBiasTau = 1.0 // s
	gyroStill   = 0.2 // rad/s
)

// calibrateGyro removes the gyroscope's bias, learnt while the base is
// disarmed and still (the 3 s arming hold gives it time to settle): a MEMS
// gyro's offset of a few °/s would otherwise tilt the filter's estimate by
// bias × Tau.
func (b *Balance) calibrateGyro(g [3]float64, dt float64) [3]float64 {
	still := true
	for i := range g {
		still = still && math.Abs(g[i]-b.gyroBias[i]) < gyroStill
	}
	if b.state != StateArmed && still {
		for i := range g {
			b.gyroBias[i] += (g[i] - b.gyroBias[i]) * dt / gyroBiasTau
		}
	}
	for i := range g {
		g[i] -= b.gyroBias[i]
	}
	return g
}

// estopActive gathers every emergency stop source: the IO board's kill
// flag and estop fault, the Orin's estop mode, the bus's estop topic.
func (b *Balance) estopActive(now time.Time) bool {
	fresh := now.Sub(b.rcAt) <= b.watchdog()
	return (fresh && b.rc.Flags&link.FlagKill != 0) ||
		(now.Sub(b.ioFaultAt) <= b.watchdog() && b.ioFault&link.FaultEStop != 0) ||
		b.mode == canmsg.ModeEStop || b.busEStop
}

func (b *Balance) watchdog() time.Duration {
	return time.Duration(b.cfg.WatchdogMS) * time.Millisecond
}

func (b *Balance) canTimeout() time.Duration {
	return time.Duration(b.cfg.CANTimeoutMS) * time.Millisecond
}

// checkFaults applies the watchdog, RC loss and tilt cutoff.
func (b *Balance) checkFaults(now time.Time) {
	wd := b.watchdog()
	setBit(&b.faults, FaultIMU, now.Sub(b.imuAt) > wd)
	setBit(&b.faults, FaultLink, now.Sub(b.linkAt) > wd)
	rcLoss := now.Sub(b.ioFaultAt) <= wd && b.ioFault&link.FaultRCLoss != 0
	setBit(&b.faults, FaultRCLoss, rcLoss)
	setBit(&b.faults, FaultCANTimeout, now.Sub(b.canVelAt) > b.canTimeout())
	motor := false
	for _, v := range b.vesc {
		t := v.Telemetry()
		motor = motor || t.Status.At.IsZero() || now.Sub(t.Status.At) > vescStale
	}
	setBit(&b.faults, FaultMotor, motor)
	tilt := math.Abs(b.pitch)*180/math.Pi > b.tiltLimit
	setBit(&b.faults, FaultTilt, tilt)
	switch {
	case b.faults&(FaultIMU|FaultLink) != 0:
		b.fault(StateWatchdog)
	case rcLoss:
		b.fault(StateRCLoss)
	case tilt:
		b.fault(StateTilt)
	case b.mode == canmsg.ModeOff && b.state == StateArmed:
		b.state = StateDisarmed
	}
}

func setBit(f *uint8, bit uint8, on bool) {
	if on {
		*f |= bit
	} else {
		*f &^= bit
	}
}

// fault cuts the motors and, if the base was armed (or already in a
// lesser state), records why. Faults hold until a re-arm.
func (b *Balance) fault(code uint8) {
	if b.state == StateArmed || b.state == StateDisarmed && code == StateEStop {
		b.state = code
	}
	b.motorsOff()
}

// command returns the speed (m/s) and yaw rate (rad/s) to follow: the
// Orin's while its 0x300 frames are fresh, else the router's cmd_vel while
// it is (the same timeout), else the RC sticks; the speed limited by the
// hard cap.
func (b *Balance) command(now time.Time) (speed, yawRate float64) {
	if b.server != nil && b.server.Lost() {
		return 0, 0 // the server is gone: stand (balancing) where it is
	}
	// A command from before the link returned is not a fresh one.
	if now.Sub(b.canVelAt) <= b.canTimeout() && !b.canVelAt.Before(b.serverBack) {
		speed = float64(b.canVel.SpeedMMPS) / 1000
		yawRate = float64(b.canVel.SteerMrad) / 1000
	} else if !b.busVelAt.IsZero() && now.Sub(b.busVelAt) <= b.canTimeout() && !b.busVelAt.Before(b.serverBack) {
		speed, yawRate = b.busSpeed, b.busYaw
		steer := b.cfg.MaxSteerMrad / 1000
		yawRate = math.Max(-steer, math.Min(steer, yawRate))
	} else if now.Sub(b.rcAt) <= b.watchdog() && !b.rcAt.Before(b.serverBack) {
		speed = float64(b.rc.Throttle) / link.StickFull * b.maxSpeed
		// Steer right (positive stick) turns right: negative yaw rate.
		yawRate = -float64(b.rc.Steer) / link.StickFull * b.cfg.MaxSteerMrad / 1000
	}
	limit := b.maxSpeed * float64(b.speedLimit) / 100
	return math.Max(-limit, math.Min(limit, speed)), yawRate
}

// source names where command takes the speed from.
func (b *Balance) source(now time.Time) string {
	switch {
	case now.Sub(b.canVelAt) <= b.canTimeout():
		return "can"
	case !b.busVelAt.IsZero() && now.Sub(b.busVelAt) <= b.canTimeout():
		return "bus"
	}
	return "rc"
}

// onArmSwitch takes the router's arm switch. Off disarms at once; on arms
// once it has stayed on for arm_hold_ms (checkArmSwitch), through arm's
// checks, one attempt per switching on.
func (b *Balance) onArmSwitch(a msg.BalanceArm) {
	now := b.ex.Now()
	switch {
	case a.Arm && !b.busArm:
		b.busArmSince, b.busArmTried = now, !b.busArmSeenOff
	case !a.Arm && b.busArm:
		b.disarm()
	}
	if !a.Arm {
		b.busArmSeenOff = true
	}
	b.busArm = a.Arm
}

// checkArmSwitch arms the base when the router's arm switch has been held
// on long enough.
func (b *Balance) checkArmSwitch(now time.Time) {
	if !b.busArm || b.busArmTried || now.Sub(b.busArmSince) < time.Duration(b.cfg.ArmHoldMS)*time.Millisecond {
		return
	}
	b.busArmTried = true
	if b.state == StateArmed {
		return
	}
	if err := b.arm(now); err != nil {
		b.Env.Log.Warn("arming from the arm switch refused", "reason", err.Error())
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// updateSpeed estimates the forward speed from the wheels: each motor's
// rate relative to the body plus the body's pitch rate is the wheel's.
// Its derivative, taken between the VESCs' status messages (50 Hz) and
// smoothed over accelTau, is the base's forward acceleration.
func (b *Balance) updateSpeed(now time.Time) {
	var sum float64
	var at time.Time
	for _, v := range b.vesc {
		t := v.Telemetry()
		motor := t.Status.ERPM / float64(b.cfg.PolePairs) * 2 * math.Pi / 60
		sum += motor + b.pitchRate
		if t.Status.At.After(at) {
			at = t.Status.At
		}
	}
	b.speed = sum / 2 * b.cfg.WheelRadiusM
	if at.After(b.speedAt) {
		if !b.speedAt.IsZero() {
			dt := at.Sub(b.speedAt).Seconds()
			a := (b.speed - b.prevSpeed) / dt
			k := dt / (accelTau + dt)
			b.accel += k * (a - b.accel)
		}
		b.speedAt, b.prevSpeed = at, b.speed
	}
	if now.Sub(b.speedAt) > vescStale {
		b.accel = 0
	}
}

// accelTau smooths the acceleration estimate, pitchAccelTau the pitch
// acceleration's (the gyro's derivative).
const (
	accelTau      = 0.02 // s
	pitchAccelTau = 0.02 // s
)

// wheelBaseM is the distance between the wheels' contact points, m.
const wheelBaseM = 0.45

// drive commands wheel speeds directly (manual mode).
func (b *Balance) drive(speed, yawRate float64) {
	half := b.cfg.WheelRadiusM
	for side, v := range []float64{speed - yawRate*wheelBaseM/2, speed + yawRate*wheelBaseM/2} {
		erpm := v / half * 60 / (2 * math.Pi) * float64(b.cfg.PolePairs)
		b.send(b.vesc[side].SetRPM(erpm))
	}
	b.motorsOn = true
}

func (b *Balance) setCurrents(l, r float64) {
	b.send(b.vesc[0].SetCurrent(l))
	b.send(b.vesc[1].SetCurrent(r))
	b.motorsOn = true
}

func (b *Balance) send(err error) {
	if err != nil {
		b.canErr++
	} else {
		b.canTx++
	}
}

// motorsOff releases both motors at once, then repeats it every 20 ms so a
// VESC that missed it is still told.
func (b *Balance) motorsOff() {
	now := b.ex.Now()
	if !b.motorsOn && now.Sub(b.lastOff) < 20*time.Millisecond {
		return
	}
	for _, v := range b.vesc {
		if v != nil {
			b.send(v.SetCurrent(0))
		}
	}
	b.out = control.Outputs{}
	b.motorsOn, b.lastOff = false, now
}

// arm arms the base if it is safe: upright, IMU and IO board alive, no
// emergency stop, no RC loss, mode not off. It says why not.
func (b *Balance) arm(now time.Time) error {
	var why string
	switch {
	case b.estopActive(now):
		why = "emergency stop active"
	case now.Sub(b.imuAt) > b.watchdog():
		why = "IMU silent"
	case now.Sub(b.linkAt) > b.watchdog():
		why = "IO board silent"
	case b.faults&FaultRCLoss != 0:
		why = "RC lost"
	case b.mode == canmsg.ModeOff:
		why = "mode is off"
	case math.Abs(b.pitch)*180/math.Pi > b.cfg.ArmUprightDeg:
		why = fmt.Sprintf("not upright (pitch %.1f°, arming needs within ±%g°)", b.pitch*180/math.Pi, b.cfg.ArmUprightDeg)
	}
	if why != "" {
		b.faults |= FaultArmRefused
		b.refusals++
		return errors.New(why)
	}
	b.faults &^= FaultArmRefused
	b.ctl.Reset()
	b.state = StateArmed
	return nil
}

// disarm releases the motors.
func (b *Balance) disarm() {
	if b.state == StateArmed {
		b.state = StateDisarmed
	}
	b.motorsOff()
}

// onLink handles a frame from the IO board.
func (b *Balance) onLink(m link.Message) {
	now := b.ex.Now()
	b.linkAt = now
	switch m := m.(type) {
	case link.RCCmd:
		b.rc, b.rcAt = m, now
		armed := m.Flags&link.FlagArmed != 0
		switch {
		case armed && !b.rcArmed && b.state != StateArmed:
			if err := b.arm(now); err != nil {
				b.Env.Log.Warn("arming refused", "reason", err.Error())
			}
		case !armed && b.rcArmed:
			b.disarm()
		}
		b.rcArmed = armed
	case link.Fault:
		b.ioFault, b.ioFaultAt = m.Flags, now
		// Acted on at once, not at the next loop: the IO board clears
		// its armed flag in the same breath.
		if m.Flags&link.FaultEStop != 0 {
			b.faults |= FaultEStop
			b.fault(StateEStop)
		} else if m.Flags&link.FaultRCLoss != 0 {
			b.fault(StateRCLoss)
		}
	case link.Sensor:
		b.sensor = m
	}
}

// onCAN handles the Orin's frames.
func (b *Balance) onCAN(f can.Frame, at time.Time) {
	b.canRx++
	var err error
	switch f.ID {
	case canmsg.IDVelocity:
		var v canmsg.Velocity
		if v, err = canmsg.ParseVelocity(f); err == nil {
			b.canVel, b.canVelAt = v, b.ex.Now()
		}
	case canmsg.IDPID:
		var g canmsg.PIDGains
		var done bool
		if g, done, err = b.pidAsm.Add(f); err == nil && done {
			err = b.setGains(float64(g.Kp), float64(g.Ki), float64(g.Kd))
		}
	case canmsg.IDMode:
		var m canmsg.Mode
		if m, err = canmsg.ParseMode(f); err == nil {
			b.mode = m
		}
	case canmsg.IDConfig:
		var c canmsg.Config
		if c, err = canmsg.ParseConfig(f); err == nil {
			err = b.setTiltLimit(float64(c.TiltLimitX100) / 100)
			if err == nil && c.MaxSpeedMMPS > 0 {
				b.maxSpeed = math.Min(float64(c.MaxSpeedMMPS), b.cfg.MaxSpeedMMPS) / 1000
			}
		}
	}
	if err != nil {
		b.canBad++
	}
	_ = at
}

func (b *Balance) setGains(kp, ki, kd float64) error {
	g := control.Gains{Kp: kp, Ki: ki, Kd: kd}
	if !g.Valid() {
		return fmt.Errorf("gains %g %g %g: want finite, ≥ 0", kp, ki, kd)
	}
	b.ctl.SetPitchGains(g)
	return nil
}

func (b *Balance) setTiltLimit(deg float64) error {
	if !(deg > 0 && deg <= b.cfg.TiltLimitDeg) {
		return fmt.Errorf("tilt limit %g°: want above 0 and at most %g° (balance.tilt_limit_deg)", deg, b.cfg.TiltLimitDeg)
	}
	b.tiltLimit = deg
	return nil
}

// setSpeedLimit changes the hard cap: 10–100 % in steps of 10, raised one
// step at a time (lowered at once).
func (b *Balance) setSpeedLimit(p int) error {
	if err := checkSpeedLimit(p); err != nil {
		return err
	}
	if p > b.speedLimit+10 {
		return fmt.Errorf("%d %%: the cap rises 10 %% at a time (now %d %%, next %d %%)", p, b.speedLimit, b.speedLimit+10)
	}
	b.speedLimit = p
	return nil
}

// sendTelemetry sends CAN 0x400 and 0x401.
func (b *Balance) sendTelemetry() {
	l, r := b.vesc[0].Telemetry(), b.vesc[1].Telemetry()
	a := canmsg.TelemetryA{
		PitchX100: sat16(b.pitch * 180 / math.Pi * 100),
		PIDOut:    sat16(b.out.PIDOut * 100),
		SpeedMMPS: sat16(b.speed * 1000),
		State:     b.state,
	}
	volts := math.Max(l.Status5.InputVoltage, r.Status5.InputVoltage)
	tb := canmsg.TelemetryB{
		VESCLeftRPM:  sat16(l.Status.ERPM),
		VESCRightRPM: sat16(r.Status.ERPM),
		BatteryMV:    uint16(math.Max(0, math.Min(65535, math.Round(volts*1000)))),
		Faults:       b.faults,
	}
	b.send(b.can.Send(a.Frame()))
	b.send(b.can.Send(tb.Frame()))
}

func sat16(v float64) int16 {
	return int16(math.Max(math.MinInt16, math.Min(math.MaxInt16, math.Round(v))))
}

// sendLinkState sends STATE to the IO board, and LED_CMD and BUZZER when
// the state changes.
func (b *Balance) sendLinkState() {
	buf := link.Append(nil, link.State{
		PitchX100: sat16(b.pitch * 180 / math.Pi * 100), PIDOut: sat16(b.out.PIDOut * 100), ErrorState: b.state,
	})
	led := uint8(ledIdle)
	switch {
	case b.state == StateArmed:
		led = ledArmed
	case b.state >= StateTilt:
		led = ledFault
	}
	if led != b.lastLED {
		colour := [3][3]uint8{{0, 0, 64}, {0, 255, 0}, {255, 0, 0}}[led]
		buf = link.Append(buf, link.LEDCmd{Pattern: led, R: colour[0], G: colour[1], B: colour[2]})
		buf = link.Append(buf, link.Buzzer{ToneID: led, DurationMs: 200})
		b.lastLED = led
	}
	if _, err := b.link.Write(buf); err != nil {
		b.linkTxE++
	} else {
		b.linkTx++
	}
}

// State returns the published state.
func (b *Balance) State() msg.BalanceState {
	now := b.ex.Now()
	names := []string{}
	for i, n := range balanceFaultNames {
		if b.faults&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	v := b.vesc[0].Telemetry()
	g := b.ctl.P.Pitch
	return msg.BalanceState{
		State: balanceStateNames[b.state], StateCode: b.state, Armed: b.state == StateArmed,
		Mode: b.mode.String(), Source: b.source(now),
		Pitch: b.pitch * 180 / math.Pi, PitchRate: b.pitchRate * 180 / math.Pi, PIDOut: b.out.PIDOut,
		Speed: b.speed, TargetSpeed: b.targetSpeed, YawRate: b.yawRate,
		SpeedLimit: b.speedLimit, TiltLimit: b.tiltLimit, MaxSpeed: b.maxSpeed,
		Kp: g.Kp, Ki: g.Ki, Kd: g.Kd, Faults: names, FaultBits: b.faults,
		BatteryV: v.Status5.InputVoltage, CurrentLeft: b.out.Left, CurrentRight: b.out.Right,
	}
}
