package ioboard

import (
	"errors"
	"math"
	"time"

	"github.com/saint-os/saint/hal/device/ioboard/link"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/uart"
)

// LinkBaud is the inter-board UART's rate.
const LinkBaud = 460800

// RC channels (1-based, as the reference numbers them).
const (
	ChSteer      = 1
	ChThrottle   = 2
	ChArm        = 5
	ChEStop      = 6
	ChSpeedLimit = 7
)

// Source is where the RC commands come from.
type Source string

// RC sources.
const (
	SourceNone Source = "none"
	SourceCRSF Source = "crsf"
	SourceELRS Source = "elrs"
)

// Defaults.
const (
	DefaultPeriod        = 10 * time.Millisecond
	DefaultFailoverAfter = 100 * time.Millisecond
	DefaultArmHold       = 3 * time.Second
	DefaultUprightDeg    = 10.0
	// stateStale is how old the balance board's STATE may be and still
	// count for the upright check.
	stateStale = 100 * time.Millisecond
)

// Options configure a Board.
type Options struct {
	Exec *executor.Executor
	// CRSF is the Crossfire receiver's UART (primary), ELRS the failover
	// receiver's (nil if not fitted), Link the inter-board UART.
	CRSF, ELRS, Link uart.Port
	// ArmButton is active low; Kill reads high when the kill switch is
	// open. Either may be nil (not fitted: never pressed, never killed).
	ArmButton, Kill gpio.PinIO
	// Sensors, when set, is read every SensorPeriod for a SENSOR frame.
	Sensors      func() link.Sensor
	SensorPeriod time.Duration // 0 means 100 ms

	Period        time.Duration // 0 means DefaultPeriod
	FailoverAfter time.Duration // 0 means DefaultFailoverAfter
	ArmHold       time.Duration // 0 means DefaultArmHold
	UprightDeg    float64       // 0 means DefaultUprightDeg
}

// Status is what the board is doing.
type Status struct {
	Source    Source
	Armed     bool
	Kill      bool
	KillPin   bool
	RCEStop   bool
	RCLoss    bool
	Throttle  int16
	Steer     int16
	SpeedCap  int // percent
	Holding   time.Duration
	State     link.State // the balance board's latest STATE
	StateAt   time.Time
	LED       link.LEDCmd
	Buzzer    link.Buzzer
	Sent      uint64 // frames sent on the link
	LinkStats link.Stats
}

// Board is the IO board's logic on one executor.
type Board struct {
	o     Options
	ex    *executor.Executor
	stops []func()
	timer *executor.Timer
	st    Status

	crsf, elrs       rc.ByteDecoder
	lastCRSF, lastEL rc.Frame
	dec              *link.Decoder

	holdStart  time.Time
	holding    bool
	prevFault  bool
	lastSensor time.Time
	buf        []byte
}

// New configures the ports, wires the inputs and starts the board on
// o.Exec. Close stops it.
func New(o Options) (*Board, error) {
	if o.Exec == nil || o.CRSF == nil || o.Link == nil {
		return nil, errors.New("ioboard: Options.Exec, CRSF and Link are required")
	}
	if o.Period <= 0 {
		o.Period = DefaultPeriod
	}
	if o.FailoverAfter <= 0 {
		o.FailoverAfter = DefaultFailoverAfter
	}
	if o.ArmHold <= 0 {
		o.ArmHold = DefaultArmHold
	}
	if o.UprightDeg <= 0 {
		o.UprightDeg = DefaultUprightDeg
	}
	if o.SensorPeriod <= 0 {
		o.SensorPeriod = 100 * time.Millisecond
	}
	b := &Board{o: o, ex: o.Exec, st: Status{Source: SourceNone, RCLoss: true, SpeedCap: 10}}
	cfg, err := rc.PortConfig(rc.CRSF)
	if err != nil {
		return nil, err
	}
	if err := o.CRSF.Configure(cfg); err != nil {
		return nil, err
	}
	if o.ELRS != nil {
		if err := o.ELRS.Configure(cfg); err != nil {
			return nil, err
		}
	}
	if err := o.Link.Configure(uart.Config{Baud: LinkBaud}); err != nil {
		return nil, err
	}
	for _, p := range []gpio.PinIO{o.ArmButton, o.Kill} {
		if p != nil {
			if err := p.In(gpio.PullUp, gpio.BothEdges); err != nil {
				return nil, err
			}
		}
	}
	b.crsf = rc.NewCRSFDecoder(func(f rc.Frame) { b.lastCRSF = f })
	b.elrs = rc.NewCRSFDecoder(func(f rc.Frame) { b.lastEL = f })
	b.dec = link.NewDecoder(b.onLink)
	b.receive(o.CRSF, b.crsf.Feed)
	if o.ELRS != nil {
		b.receive(o.ELRS, b.elrs.Feed)
	}
	b.receive(o.Link, func(p []byte, _ time.Time) { b.dec.Feed(p) })
	if w, ok := o.Kill.(gpio.EdgeWatcher); ok && o.Kill != nil {
		b.stops = append(b.stops, w.WatchEdges(func(gpio.EdgeEvent) { b.ex.Post(b.onKillEdge) }))
	}
	b.timer = b.ex.Every(o.Period, b.tick)
	return b, nil
}

// receive posts a port's bytes into the executor (a copy: the port may
// reuse its buffer).
func (b *Board) receive(p uart.Port, feed func([]byte, time.Time)) {
	stop := p.Receive(func(data []byte, at time.Time) {
		c := append([]byte(nil), data...)
		b.ex.Post(func() { feed(c, at) })
	})
	b.stops = append(b.stops, stop)
}

// Close stops the board. Run it on the executor.
func (b *Board) Close() {
	if b.timer != nil {
		b.timer.Stop()
	}
	for _, s := range b.stops {
		s()
	}
	b.stops = nil
}

// Status returns the board's state. Run it on the executor.
func (b *Board) Status() Status {
	s := b.st
	s.LinkStats = b.dec.Stats()
	return s
}

func (b *Board) onLink(m link.Message) {
	switch m := m.(type) {
	case link.State:
		b.st.State, b.st.StateAt = m, b.ex.Now()
	case link.LEDCmd:
		b.st.LED = m
	case link.Buzzer:
		b.st.Buzzer = m
	}
}

// onKillEdge acts on a kill switch edge at once.
func (b *Board) onKillEdge() {
	if b.o.Kill.Read() == gpio.High && !b.st.KillPin {
		b.tick()
	}
}

// tick is the board's loop.
func (b *Board) tick() {
	now := b.ex.Now()
	fresh := func(f rc.Frame) bool { return f.Count > 0 && now.Sub(f.Time) <= b.o.FailoverAfter }
	var ch rc.Frame
	switch {
	case fresh(b.lastCRSF):
		b.st.Source, ch = SourceCRSF, b.lastCRSF
	case fresh(b.lastEL):
		b.st.Source, ch = SourceELRS, b.lastEL
	default:
		b.st.Source = SourceNone
	}
	b.st.RCLoss = b.st.Source == SourceNone
	get := func(n int) uint16 {
		if b.st.RCLoss || n > ch.Count {
			return 1500
		}
		return ch.Micros[n-1]
	}
	b.st.KillPin = b.o.Kill != nil && b.o.Kill.Read() == gpio.High
	b.st.RCEStop = !b.st.RCLoss && get(ChEStop) > 1500
	b.st.Kill = b.st.KillPin || b.st.RCEStop
	armSwitch := !b.st.RCLoss && get(ChArm) > 1500

	b.updateArming(now, armSwitch)

	b.st.SpeedCap = speedCap(get(ChSpeedLimit))
	if b.st.RCLoss {
		b.st.Throttle, b.st.Steer = 0, 0
	} else {
		b.st.Throttle = int16(math.Round(stick(get(ChThrottle)) * float64(b.st.SpeedCap) / 100))
		b.st.Steer = int16(math.Round(stick(get(ChSteer))))
	}
	var flags uint8
	if b.st.Armed {
		flags |= link.FlagArmed
	}
	if b.st.Kill {
		flags |= link.FlagKill
	}
	// FAULT goes first, so the balance board knows why before it sees
	// the armed flag drop.
	b.buf = b.buf[:0]
	var fault uint8
	if b.st.RCLoss {
		fault |= link.FaultRCLoss
	}
	if b.st.Kill {
		fault |= link.FaultEStop
	}
	if fault != 0 {
		b.buf = link.Append(b.buf, link.Fault{Flags: fault})
	}
	b.buf = link.Append(b.buf, link.RCCmd{Throttle: b.st.Throttle, Steer: b.st.Steer, Flags: flags})
	if b.o.Sensors != nil && now.Sub(b.lastSensor) >= b.o.SensorPeriod {
		b.lastSensor = now
		b.buf = link.Append(b.buf, b.o.Sensors())
	}
	if _, err := b.o.Link.Write(b.buf); err == nil {
		b.st.Sent++
	}
}

// updateArming runs the arming latch.
func (b *Board) updateArming(now time.Time, armSwitch bool) {
	fault := isFault(b.st.State.ErrorState) && now.Sub(b.st.StateAt) <= stateStale
	enteredFault := fault && !b.prevFault
	b.prevFault = fault
	if b.st.Kill || b.st.RCLoss || !armSwitch || enteredFault {
		b.st.Armed = false
	}
	pressed := b.o.ArmButton != nil && b.o.ArmButton.Read() == gpio.Low
	upright := now.Sub(b.st.StateAt) <= stateStale &&
		math.Abs(float64(b.st.State.PitchX100))/100 <= b.o.UprightDeg
	if !pressed || !upright || b.st.Kill || b.st.RCLoss || !armSwitch || b.st.Armed {
		b.holding, b.st.Holding = false, 0
		return
	}
	if !b.holding {
		b.holding, b.holdStart = true, now
	}
	b.st.Holding = now.Sub(b.holdStart)
	if b.st.Holding >= b.o.ArmHold {
		b.st.Armed, b.holding, b.st.Holding = true, false, 0
	}
}

// isFault tells the balance board's error states that end an arming: tilt
// cutoff, estop, watchdog, RC loss (the balance role's state codes 2–5).
func isFault(s uint8) bool { return s >= 2 }

// stick maps a channel's µs to per mille, 1000…2000 µs → −1000…1000,
// clamped, with a ±20 µs dead band around the centre.
func stick(us uint16) float64 {
	v := (float64(us) - 1500) / 500
	if math.Abs(v) < 0.04 {
		return 0
	}
	return math.Max(-1, math.Min(1, v)) * link.StickFull
}

// speedCap maps the speed-limit channel (988–2012 µs) to 10–100 % in 10 %
// steps, to the nearest step.
func speedCap(us uint16) int {
	f := (float64(us) - 988) / (2012 - 988)
	p := 10 + int(math.Round(f*9))*10
	return max(10, min(100, p))
}
