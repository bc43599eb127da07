package rc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	wire "github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/uart"
)

// PortOpener opens the serial device with the line settings c. release
// gives the device back (nil when there is nothing to release); it may
// block, and the receiver calls it off the executor.
type PortOpener func(device string, c uart.Config) (p uart.Port, release func() error, err error)

// FixedPort is a PortOpener that hands out p whatever the device: the
// simulator's end of a simulated UART, a test's pipe.
func FixedPort(p uart.Port) PortOpener {
	return func(string, uart.Config) (uart.Port, func() error, error) { return p, nil, nil }
}

// PinOpener returns GPIO bcm set up as an input reporting both edges.
type PinOpener func(bcm int) (w gpio.EdgeWatcher, release func() error, err error)

// Options configures a Receiver.
type Options struct {
	// Exec is the executor the receiver runs on (required).
	Exec *executor.Executor
	// Bus is where RCReceiverState and the failsafe's router inputs go
	// (required).
	Bus bus.Bus
	// Ports opens the UART of SBUS, IBUS and CRSF; nil means serial
	// protocols cannot be read.
	Ports PortOpener
	// Pins opens the GPIO inputs of PPM and PWM; nil means they cannot be
	// read.
	Pins PinOpener
	// RetryEvery is how long after a failed open the receiver tries again
	// (default 2 s).
	RetryEvery time.Duration
	Log        *slog.Logger
}

// FailsafePeriod is how often the state (and the hold or neutral values)
// is published while the signal is lost: well inside the router's source
// timeout, so a held route stays active.
const FailsafePeriod = 100 * time.Millisecond

// MaxCalibration is the longest calibration window.
const MaxCalibration = 30 * time.Second

// ChannelStatus is one channel as get_status shows it.
type ChannelStatus struct {
	Channel    int     `json:"channel"`
	Raw        int     `json:"raw"` // the protocol's value: 11-bit for SBUS and CRSF, µs otherwise
	Micros     int     `json:"us"`  // pulse width in µs
	Normalized float64 `json:"normalized"`
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Failsafe   bool    `json:"failsafe,omitempty"`
}

// Status is the receiver's whole state (rc get_status).
type Status struct {
	Enabled   bool   `json:"enabled"`
	Connected bool   `json:"connected"`
	Protocol  string `json:"protocol"`
	Failsafe  bool   `json:"failsafe"`
	// FailsafeReason says why: "signal lost" (no frame within timeout_ms)
	// or "receiver failsafe" (SBUS failsafe flag).
	FailsafeReason string  `json:"failsafe_reason,omitempty"`
	FailsafeAction string  `json:"failsafe_action"`
	RSSI           float32 `json:"rssi"`             // dBm, CRSF only
	LinkQuality    int     `json:"link_quality"`     // %, CRSF only
	FrameRateHz    uint32  `json:"frame_rate_hz"`    // measured from the frames' stamps
	Input          string  `json:"input"`            // "open", "closed", "disabled" or why it is not open
	Device         string  `json:"device,omitempty"` // the UART, for serial protocols
	Frames         uint64  `json:"frames"`
	BadFrames      uint64  `json:"bad_frames"`
	FramesLost     uint64  `json:"frames_lost"` // SBUS frame-lost flags
	// LastFrame is when the last good frame arrived (zero: never).
	LastFrame time.Time       `json:"last_frame"`
	Channels  []ChannelStatus `json:"channels"`
}

// Receiver reads one RC receiver and publishes its state. Its methods run
// on the executor unless they say otherwise.
type Receiver struct {
	o   Options
	ex  *executor.Executor
	log *slog.Logger
	cfg Config

	started bool
	gen     uint64 // bumped when the input closes, to drop bytes still queued
	input   string
	openErr string // the last open failure, logged once
	release []func() error
	stops   []func()
	bytes   wire.ByteDecoder
	ppm     *wire.PPMDecoder
	pwm     *wire.PWMDecoder
	port    uart.Port
	retry   *executor.Timer
	health  *executor.Timer // PortCheckEvery, for ports that report failure

	// Signal.
	have      bool // a good frame has arrived since the input opened
	lastAt    time.Time
	count     int
	micros    [MaxChannels]uint16
	raw       [MaxChannels]uint16
	avgIv     time.Duration
	hasLink   bool
	link      wire.LinkStats
	frames    uint64
	lost      uint64
	connected bool
	failsafe  bool
	reason    string
	signal    *executor.Timer // fires timeout_ms after the last good frame
	ticker    *executor.Timer
	lastPub   time.Time

	cal *calibration
}

type calibration struct {
	ch       int
	min, max uint16
	samples  int
	timer    *executor.Timer
	done     func(Channel, error)
}

// New returns a receiver for cfg that is not yet running.
func New(o Options, cfg Config) (*Receiver, error) {
	if o.Exec == nil {
		return nil, errors.New("rc: Options.Exec is required")
	}
	if o.Bus == nil {
		return nil, errors.New("rc: Options.Bus is required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.RetryEvery <= 0 {
		o.RetryEvery = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	r := &Receiver{o: o, ex: o.Exec, log: o.Log, cfg: cfg.Clone(), input: "closed"}
	r.cfg.fillTypes()
	return r, nil
}

// Start opens the input and starts publishing. A device that cannot be
// opened is retried every Options.RetryEvery.
func (r *Receiver) Start() error {
	if r.started {
		return errors.New("rc: receiver already started")
	}
	r.started = true
	r.openInput()
	r.armTicker()
	return nil
}

// Stop closes the input and stops publishing.
func (r *Receiver) Stop() {
	if !r.started {
		return
	}
	r.started = false
	r.closeInput()
	if r.ticker != nil {
		r.ticker.Stop()
		r.ticker = nil
	}
	if r.cal != nil {
		r.finishCalibration(errors.New("rc: receiver stopped"))
	}
}

// Config returns a copy of the configuration in force.
func (r *Receiver) Config() Config { return r.cfg.Clone() }

// Apply puts cfg in force. A change of protocol, device or pins reopens
// the input; calibration, names and failsafe apply to the next frame.
func (r *Receiver) Apply(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	old := r.cfg
	r.cfg = cfg.Clone()
	r.cfg.fillTypes()
	if r.started && inputChanged(old, cfg) {
		r.closeInput()
		r.openInput()
	}
	if r.started {
		r.armTicker()
		if r.have && r.signal != nil {
			r.signal.Reset(r.timeout() - r.ex.Now().Sub(r.lastAt))
		}
	}
	return nil
}

func inputChanged(a, b Config) bool {
	if a.Enabled != b.Enabled || a.Protocol != b.Protocol || a.UART != b.UART || a.GPIO.PPMPin != b.GPIO.PPMPin {
		return true
	}
	if len(a.GPIO.PWMPins) != len(b.GPIO.PWMPins) {
		return true
	}
	for i := range a.GPIO.PWMPins {
		if a.GPIO.PWMPins[i] != b.GPIO.PWMPins[i] {
			return true
		}
	}
	return false
}

func (r *Receiver) timeout() time.Duration {
	return time.Duration(r.cfg.Failsafe.TimeoutMs) * time.Millisecond
}

// openInput opens the protocol's input. Opening a serial device or a GPIO
// line is a non-blocking open and a few ioctls, so it runs here; releasing
// one may wait for its reader and runs off the executor.
func (r *Receiver) openInput() {
	if r.retry != nil {
		r.retry.Stop()
		r.retry = nil
	}
	if !r.cfg.Enabled {
		r.input = "disabled"
		return
	}
	var err error
	if wire.Protocol(r.cfg.Protocol).Serial() {
		err = r.openSerial()
	} else {
		err = r.openEdges()
	}
	if err != nil {
		r.closeInput()
		// Say it once, not at every retry.
		level := slog.LevelWarn
		if err.Error() == r.openErr {
			level = slog.LevelDebug
		}
		r.openErr, r.input = err.Error(), err.Error()
		r.log.Log(context.Background(), level, "RC receiver input not open; retrying", "source", "rc", "protocol", r.cfg.Protocol, "err", err, "retry", r.o.RetryEvery)
		r.retry = r.ex.After(r.o.RetryEvery, func() {
			r.retry = nil
			if r.started {
				r.openInput()
			}
		})
		return
	}
	r.input, r.openErr = "open", ""
	r.log.Info("RC receiver input open", "source", "rc", "protocol", r.cfg.Protocol, "device", r.cfg.UART.Device)
}

func (r *Receiver) openSerial() error {
	p := wire.Protocol(r.cfg.Protocol)
	if r.o.Ports == nil {
		return fmt.Errorf("no UART access on this server for %s", p)
	}
	lc, err := wire.PortConfig(p)
	if err != nil {
		return err
	}
	if r.cfg.UART.BaudRate > 0 {
		lc.Baud = r.cfg.UART.BaudRate
	}
	lc.Inverted = p == wire.SBUS && r.cfg.UART.Inverted
	dec, err := wire.NewByteDecoder(p, r.onFrame)
	if err != nil {
		return err
	}
	port, release, err := r.o.Ports(r.cfg.UART.Device, lc)
	if err != nil {
		return fmt.Errorf("uart.device %s: %w", r.cfg.UART.Device, err)
	}
	if release != nil {
		r.release = append(r.release, release)
	}
	if err := port.Configure(lc); err != nil {
		return fmt.Errorf("uart.device %s: %w", r.cfg.UART.Device, err)
	}
	r.bytes, r.port = dec, port
	if p, ok := port.(interface{ Err() error }); ok {
		r.health = r.ex.Every(PortCheckEvery, func() { r.checkPort(p) })
	}
	gen := r.gen
	r.stops = append(r.stops, port.Receive(func(b []byte, at time.Time) {
		// The port may reuse b once we return: the executor gets a copy.
		data := append([]byte(nil), b...)
		r.ex.Post(func() {
			if r.gen == gen && r.bytes != nil {
				r.bytes.Feed(data, at)
			}
		})
	}))
	return nil
}

func (r *Receiver) openEdges() error {
	if r.o.Pins == nil {
		return fmt.Errorf("no GPIO access on this server for %s", r.cfg.Protocol)
	}
	pins := []int{r.cfg.GPIO.PPMPin}
	if r.cfg.Protocol == msg.RCProtocolPWM {
		pins = r.cfg.GPIO.PWMPins
		d, err := wire.NewPWMDecoder(len(pins), 0, r.onFrame)
		if err != nil {
			return err
		}
		r.pwm = d
	} else {
		r.ppm = wire.NewPPMDecoder(nil, r.onFrame)
	}
	gen := r.gen
	for i, bcm := range pins {
		w, release, err := r.o.Pins(bcm)
		if err != nil {
			return fmt.Errorf("GPIO%d: %w", bcm, err)
		}
		if release != nil {
			r.release = append(r.release, release)
		}
		ch := i
		r.stops = append(r.stops, w.WatchEdges(func(ev gpio.EdgeEvent) {
			r.ex.Post(func() {
				if r.gen != gen {
					return
				}
				if r.pwm != nil {
					r.pwm.Edge(ch, ev)
				} else if r.ppm != nil {
					r.ppm.Edge(ev)
				}
			})
		}))
	}
	return nil
}

// closeInput stops reading, forgets the signal and releases the devices
// off the executor.
func (r *Receiver) closeInput() {
	r.gen++
	for _, stop := range r.stops {
		stop()
	}
	r.stops = nil
	if rel := r.release; len(rel) > 0 {
		r.release = nil
		go func() {
			for _, f := range rel {
				_ = f()
			}
		}()
	}
	if r.retry != nil {
		r.retry.Stop()
		r.retry = nil
	}
	if r.signal != nil {
		r.signal.Stop()
		r.signal = nil
	}
	if r.health != nil {
		r.health.Stop()
		r.health = nil
	}
	r.bytes, r.ppm, r.pwm, r.port = nil, nil, nil, nil
	r.have, r.connected, r.failsafe, r.reason = false, false, false, ""
	r.count, r.avgIv, r.hasLink = 0, 0, false
	r.input = "closed"
}

// onFrame takes one good frame from a decoder.
func (r *Receiver) onFrame(f wire.Frame) {
	now := r.ex.Now()
	r.frames++
	if f.Interval > 0 && f.Interval < time.Second {
		if r.avgIv == 0 {
			r.avgIv = f.Interval
		} else {
			r.avgIv += (f.Interval - r.avgIv) / 8
		}
	}
	if f.HasLink {
		r.hasLink, r.link = true, f.Link
	}
	if f.FrameLost {
		r.lost++
	}
	r.have, r.connected, r.lastAt = true, true, now
	if r.signal == nil {
		r.signal = r.ex.After(r.timeout(), r.signalLost)
	} else {
		r.signal.Reset(r.timeout())
	}
	if f.Failsafe {
		// The receiver has lost the transmitter and sends its own failsafe
		// positions: keep the last real ones.
		r.enterFailsafe("receiver failsafe")
		return
	}
	r.count = min(f.Count, MaxChannels)
	r.micros, r.raw = f.Micros, f.Raw
	if r.failsafe {
		r.failsafe, r.reason = false, ""
		r.log.Info("RC signal back", "source", "rc", "protocol", r.cfg.Protocol)
	}
	if r.cal != nil {
		r.sampleCalibration()
	}
	if r.cfg.PublishHz == 0 {
		r.publish()
	}
}

// signalLost runs timeout_ms after the last good frame.
func (r *Receiver) signalLost() {
	r.signal = nil
	r.connected = false
	r.enterFailsafe("signal lost")
}

func (r *Receiver) enterFailsafe(reason string) {
	if r.failsafe {
		r.reason = reason
		return
	}
	r.failsafe, r.reason = true, reason
	action := r.cfg.Failsafe.Action
	r.log.Warn("RC failsafe: "+reason, "source", "rc", "action", action, "protocol", r.cfg.Protocol)
	if action == msg.FailsafeEStop {
		r.sendRouter(msg.RouterInput{Source: msg.SourceRC, Command: "estop",
			Values: map[string]float32{"enable": 1}})
	}
	r.publish()
	r.armTicker()
}

// armTicker runs the publishing tick: at PublishHz if set, and at
// FailsafePeriod while in failsafe.
func (r *Receiver) armTicker() {
	period := time.Duration(0)
	if r.cfg.PublishHz > 0 {
		period = time.Duration(float64(time.Second) / r.cfg.PublishHz)
	}
	if r.failsafe && (period == 0 || period > FailsafePeriod) {
		period = FailsafePeriod
	}
	if r.ticker != nil {
		r.ticker.Stop()
		r.ticker = nil
	}
	if period > 0 && r.started {
		r.ticker = r.ex.Every(period, r.tick)
	}
}

func (r *Receiver) tick() {
	if !r.have {
		return
	}
	if r.failsafe || r.cfg.PublishHz > 0 {
		r.publish()
	}
	if !r.failsafe && r.cfg.PublishHz == 0 {
		r.armTicker() // the failsafe ended: back to publishing every frame
	}
}

// PortCheckEvery is how often the receiver asks a UART that can tell
// (hal/serial's Port, with Err) whether its reader has stopped: a USB
// adapter unplugged. It is then closed and reopened.
const PortCheckEvery = time.Second

func (r *Receiver) checkPort(p interface{ Err() error }) {
	if err := p.Err(); err != nil {
		r.log.Warn("RC receiver UART failed; reopening", "source", "rc", "device", r.cfg.UART.Device, "err", err)
		r.closeInput()
		r.openInput()
	}
}

// publish sends the state, and while in a hold or neutral failsafe the
// values the router should keep using.
func (r *Receiver) publish() {
	st := r.State()
	r.lastPub = r.ex.Now()
	if err := r.o.Bus.Publish(msg.TopicRCState, st); err != nil {
		r.log.Debug("RC state not published", "source", "rc", "err", err)
	}
	if !r.failsafe {
		return
	}
	switch r.cfg.Failsafe.Action {
	case msg.FailsafeHold, msg.FailsafeNeutral:
		in := msg.RouterInput{Source: msg.SourceRC, Values: make(map[string]float32, len(st.Channels))}
		for _, c := range st.Channels {
			in.Values[msg.RCChannelProperty(int(c.ChannelNumber))] = c.Normalized
		}
		r.sendRouter(in)
	}
}

func (r *Receiver) sendRouter(in msg.RouterInput) {
	if err := r.o.Bus.Publish(msg.TopicRouterInput, in); err != nil {
		r.log.Warn("RC failsafe input not sent to the router", "source", "rc", "err", err)
	}
}

// channelValue is channel i's (0-based) pulse width and normalised value
// as published now: in a neutral failsafe, the channel's neutral.
func (r *Receiver) channelValue(i int) (us, raw uint16, norm float64) {
	c := r.cfg.Channel(i + 1)
	if r.failsafe && r.cfg.Failsafe.Action == msg.FailsafeNeutral {
		us, norm = c.Neutral()
		return us, r.rawOf(us), norm
	}
	us = r.micros[i]
	if us == 0 { // a PWM channel without pulses
		return 0, 0, 0
	}
	return us, r.raw[i], c.Normalize(us)
}

// rawOf converts µs to the protocol's raw value.
func (r *Receiver) rawOf(us uint16) uint16 {
	switch r.cfg.Protocol {
	case msg.RCProtocolSBUS:
		return wire.MicrosToSBUS(us)
	case msg.RCProtocolCRSF:
		return wire.MicrosToCRSF(us)
	}
	return us
}

// State returns the state as published: RCReceiverState.msg.
func (r *Receiver) State() msg.RCReceiverState {
	st := msg.RCReceiverState{
		Protocol: r.cfg.Protocol, Connected: r.connected, Failsafe: r.failsafe,
		ChannelCount: uint8(r.count), Channels: make([]msg.RCChannelState, 0, r.count),
		FrameRateHz: r.frameRate(),
	}
	if r.hasLink {
		st.RSSI = float32(r.link.RSSIdBm())
	}
	var last uint64
	if r.have {
		last = uint64(r.lastAt.UnixNano())
	}
	for i := 0; i < r.count; i++ {
		us, raw, n := r.channelValue(i)
		st.Channels = append(st.Channels, msg.RCChannelState{
			ChannelNumber: uint8(i + 1), RawValue: raw, Normalized: float32(n),
			Failsafe: r.failsafe || us == 0, LastUpdateNs: last,
		})
	}
	return st
}

func (r *Receiver) frameRate() uint32 {
	if r.avgIv <= 0 || !r.connected {
		return 0
	}
	return uint32(math.Round(float64(time.Second) / float64(r.avgIv)))
}

// Status returns everything get_status shows.
func (r *Receiver) Status() Status {
	st := Status{
		Enabled: r.cfg.Enabled, Connected: r.connected, Protocol: r.cfg.Protocol,
		Failsafe: r.failsafe, FailsafeReason: r.reason, FailsafeAction: r.cfg.Failsafe.Action,
		FrameRateHz: r.frameRate(), Input: r.input, Frames: r.frames, FramesLost: r.lost,
		Channels: make([]ChannelStatus, 0, r.count),
	}
	if wire.Protocol(r.cfg.Protocol).Serial() {
		st.Device = r.cfg.UART.Device
	}
	if r.hasLink {
		st.RSSI, st.LinkQuality = float32(r.link.RSSIdBm()), int(r.link.UplinkLQ)
	}
	switch {
	case r.bytes != nil:
		st.BadFrames = r.bytes.Stats().BadFrames
	case r.ppm != nil:
		st.BadFrames = r.ppm.Stats().BadFrames
	case r.pwm != nil:
		st.BadFrames = r.pwm.Stats().BadFrames
	}
	if r.have {
		st.LastFrame = r.lastAt
	}
	for i := 0; i < r.count; i++ {
		c := r.cfg.Channel(i + 1)
		us, raw, n := r.channelValue(i)
		st.Channels = append(st.Channels, ChannelStatus{Channel: i + 1, Raw: int(raw), Micros: int(us),
			Normalized: n, Name: c.Name, Type: c.Type, Failsafe: r.failsafe || us == 0})
	}
	return st
}

// Micros returns channel n's (1-based) latest pulse width in µs, and
// whether the receiver has one.
func (r *Receiver) Micros(n int) (uint16, bool) {
	if !r.have || n < 1 || n > r.count || r.micros[n-1] == 0 {
		return 0, false
	}
	return r.micros[n-1], true
}

// Calibrate captures channel n's travel over window: the operator moves
// the stick (or switch) through both ends and lets it return to rest
// before the window closes. The channel gets the smallest and largest
// widths seen as min and max and, for a stick, the width at the end as its
// centre; done gets the new calibration, which is put in force (the caller
// persists it), or an error. Only one calibration runs at a time.
func (r *Receiver) Calibrate(n int, window time.Duration, done func(Channel, error)) {
	switch {
	case n < 1 || n > MaxChannels:
		done(Channel{}, fieldErr("channel", "want 1 to %d, got %d", MaxChannels, n))
		return
	case window <= 0 || window > MaxCalibration:
		done(Channel{}, fieldErr("duration_ms", "want 1 to %d ms, got %d", MaxCalibration.Milliseconds(), window.Milliseconds()))
		return
	case r.cal != nil:
		done(Channel{}, fmt.Errorf("channel %d is being calibrated; wait for it to finish", r.cal.ch))
		return
	}
	r.cal = &calibration{ch: n, done: done}
	r.sampleCalibration()
	r.cal.timer = r.ex.After(window, func() { r.finishCalibration(nil) })
}

func (r *Receiver) sampleCalibration() {
	us, ok := r.Micros(r.cal.ch)
	if !ok || r.failsafe {
		return
	}
	if r.cal.samples == 0 || us < r.cal.min {
		r.cal.min = us
	}
	if r.cal.samples == 0 || us > r.cal.max {
		r.cal.max = us
	}
	r.cal.samples++
}

// MinTravel is the least travel (µs) a calibration accepts.
const MinTravel = 100

func (r *Receiver) finishCalibration(stopErr error) {
	cal := r.cal
	r.cal = nil
	if cal.timer != nil {
		cal.timer.Stop()
	}
	if stopErr != nil {
		cal.done(Channel{}, stopErr)
		return
	}
	end, ok := r.Micros(cal.ch)
	if cal.samples == 0 || !ok || r.failsafe {
		cal.done(Channel{}, fmt.Errorf("no signal on channel %d during the calibration", cal.ch))
		return
	}
	if int(cal.max)-int(cal.min) < MinTravel {
		cal.done(Channel{}, fmt.Errorf("channel %d moved only %d µs (%d to %d); move it through its whole travel during the window",
			cal.ch, cal.max-cal.min, cal.min, cal.max))
		return
	}
	c := r.cfg.Channel(cal.ch)
	c.Min, c.Max = int(cal.min), int(cal.max)
	if c.Type == TypeSwitch {
		c.Center = c.Min
	} else {
		c.Center = int(end)
		if c.Center <= c.Min || c.Center >= c.Max {
			cal.done(Channel{}, fmt.Errorf("channel %d ended at %d µs, an end of its travel; let the stick return to its centre before the window closes", cal.ch, end))
			return
		}
	}
	next := r.cfg.Clone()
	next.SetChannel(c)
	if err := r.Apply(next); err != nil {
		cal.done(Channel{}, err)
		return
	}
	r.log.Info(fmt.Sprintf("RC channel %d calibrated: %d / %d / %d µs", c.Number, c.Min, c.Center, c.Max), "source", "rc")
	cal.done(c, nil)
}
