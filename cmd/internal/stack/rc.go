package stack

import (
	"fmt"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/sim/twin/rctx"
)

// rcReceiver is the server's RC receiver in the simulator: an SBUS
// receiver (the rctx twin, bound to its transmitter) on a simulated UART,
// decoded with hal/device/rc, normalised with the server's channel
// calibration and published as msg.RCReceiverState on msg.TopicRCState,
// where the router takes it.
type rcReceiver struct {
	tx       *rctx.Serial
	bus      bus.Bus
	calib    func() []settings.Channel
	stopRecv func()
}

// newRCReceiver wires the transmitter to the decoder. The transmitter
// starts switched off (no frames) so that it takes nothing over from the
// other sources until someone picks it up; its switches start in their
// safe-to-drive positions (the emergency switch, channel 6, high).
func newRCReceiver(ex *executor.Executor, b bus.Bus, calib func() []settings.Channel) (*rcReceiver, error) {
	device, host := uarttest.Pipe(ex.Clock())
	r := &rcReceiver{bus: b, calib: calib}
	dec, err := rc.NewByteDecoder(rc.SBUS, r.onFrame)
	if err != nil {
		return nil, err
	}
	r.stopRecv = host.Receive(dec.Feed)
	tx, err := rctx.NewSerial(ex, device, rc.SBUS, &rctx.SerialOptions{SBUSFailsafeAfter: 100 * time.Millisecond})
	if err != nil {
		r.stopRecv()
		return nil, err
	}
	if err := tx.SetSwitch(6, true); err != nil {
		return nil, err
	}
	tx.SetLinkLost(true)
	r.tx = tx
	return r, nil
}

// onFrame publishes one decoded frame (executor).
func (r *rcReceiver) onFrame(f rc.Frame) {
	st := msg.RCReceiverState{
		Protocol: msg.RCProtocolSBUS, Connected: true, Failsafe: f.Failsafe,
		ChannelCount: uint8(f.Count),
	}
	if f.Interval > 0 {
		st.FrameRateHz = uint32(time.Second / f.Interval)
	}
	cal := map[int]settings.Channel{}
	for _, c := range r.calib() {
		cal[c.Number] = c
	}
	for i := 0; i < f.Count; i++ {
		n := i + 1
		st.Channels = append(st.Channels, msg.RCChannelState{
			ChannelNumber: uint8(n), RawValue: f.Raw[i],
			Normalized: normalize(f.Micros[i], cal[n]), Failsafe: f.Failsafe,
			LastUpdateNs: uint64(f.Time.UnixNano()),
		})
	}
	_ = r.bus.Publish(msg.TopicRCState, st)
}

// normalize maps a pulse to -1…1 around the channel's centre, with the
// default 1000–1500–2000 µs calibration for channels the settings do not
// list.
func normalize(us uint16, c settings.Channel) float32 {
	if c.Max <= c.Min || c.Center <= c.Min || c.Center >= c.Max {
		c.Min, c.Center, c.Max = rctx.Low, rctx.Center, rctx.High
	}
	v := float64(us) - float64(c.Center)
	if v >= 0 {
		v /= float64(c.Max - c.Center)
	} else {
		v /= float64(c.Center - c.Min)
	}
	v = max(-1, min(1, v))
	if c.Reversed {
		v = -v
	}
	return float32(v)
}

// RC is the simulated transmitter: stick and switch positions and its link.
type RC struct{ r *rcReceiver }

// SetPower switches the transmitter on (frames flow) or off (the link is
// lost; the receiver sends SBUS frame-lost and then failsafe frames).
func (c RC) SetPower(on bool) { c.r.tx.SetLinkLost(!on) }

// SetNormalized moves channel ch (1-based) to v in -1…1.
func (c RC) SetNormalized(ch int, v float64) error {
	if err := c.r.tx.SetNormalized(ch, v); err != nil {
		return fmt.Errorf("rc channel %d: %w", ch, err)
	}
	return nil
}

// SetSwitch flips a two-position switch on channel ch.
func (c RC) SetSwitch(ch int, on bool) error {
	if err := c.r.tx.SetSwitch(ch, on); err != nil {
		return fmt.Errorf("rc channel %d: %w", ch, err)
	}
	return nil
}

func (r *rcReceiver) close() {
	r.tx.Close()
	r.stopRecv()
}
