package rctx

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/device/rc"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart"
)

// SerialOptions configures a Serial. Nil or zero fields mean defaults.
type SerialOptions struct {
	// Period is the frame period; 0 means the protocol's usual one
	// (rc.SBUSPeriod, rc.IBUSPeriod, rc.CRSFPeriod).
	Period time.Duration
	// CRSFAddress is the address byte of CRSF frames; 0 means 0xC8.
	CRSFAddress byte
	// LinkStatsEvery is how many CRSF channel frames go between two
	// LINK_STATISTICS frames; 0 means 25 (10 Hz at 250 Hz).
	LinkStatsEvery int
	// SBUSFailsafeAfter, when positive, makes an SBUS receiver behave as
	// most do when the link is lost: it keeps sending the last positions
	// with the frame-lost flag, and after this long raises failsafe too.
	// Zero means it goes quiet, like the other protocols.
	SBUSFailsafeAfter time.Duration
}

// DefaultLinkStats returns the CRSF link statistics a Serial starts with: a
// strong link a few metres away, 100 mW.
func DefaultLinkStats() rc.LinkStats {
	return rc.LinkStats{
		UplinkRSSI1: 40, UplinkRSSI2: 42, UplinkLQ: 100, UplinkSNR: 9,
		RFMode: 6, TxPower: 3, DownlinkRSSI: 38, DownlinkLQ: 100, DownlinkSNR: 8,
	}
}

// Serial is a receiver with a serial output (SBUS, IBUS or CRSF) bound to a
// transmitter. Frames are written on the port from executor timer callbacks,
// one Write per frame. Its Sticks' and its own methods are safe for
// concurrent use.
type Serial struct {
	Sticks

	ex       *executor.Executor
	port     uart.Port
	proto    rc.Protocol
	period   time.Duration
	addr     byte
	statsGap int
	holdFor  time.Duration // SBUSFailsafeAfter
	timer    *executor.Timer

	mu        sync.Mutex
	frameLost bool
	failsafe  bool
	link      rc.LinkStats
	noise     int
	rng       *rand.Rand
	frames    uint64
	sinceLink int
	err       error
	buf       []byte
	closed    bool
	lost      bool      // the link was down at the previous frame
	lostAt    time.Time // when the frame timer first found it down
}

// NewSerial configures port for proto (rc.PortConfig) and starts sending
// frames on it, the first one period from now. Close stops it.
func NewSerial(ex *executor.Executor, port uart.Port, proto rc.Protocol, o *SerialOptions) (*Serial, error) {
	cfg, err := rc.PortConfig(proto)
	if err != nil {
		return nil, err
	}
	if err := port.Configure(cfg); err != nil {
		return nil, fmt.Errorf("rctx: configuring the %s port: %w", proto, err)
	}
	var opt SerialOptions
	if o != nil {
		opt = *o
	}
	if opt.Period < 0 || opt.LinkStatsEvery < 0 || opt.SBUSFailsafeAfter < 0 {
		return nil, fmt.Errorf("rctx: period %v, link statistics every %d frames, failsafe after %v: want none negative",
			opt.Period, opt.LinkStatsEvery, opt.SBUSFailsafeAfter)
	}
	n := rc.MaxChannels
	switch proto {
	case rc.SBUS:
		opt.Period = cmp.Or(opt.Period, rc.SBUSPeriod)
	case rc.IBUS:
		opt.Period = cmp.Or(opt.Period, rc.IBUSPeriod)
		n = rc.IBUSChannels
	case rc.CRSF:
		opt.Period = cmp.Or(opt.Period, rc.CRSFPeriod)
	}
	s := &Serial{
		ex:       ex,
		port:     port,
		proto:    proto,
		period:   opt.Period,
		addr:     cmp.Or(opt.CRSFAddress, rc.CRSFAddrFlightController),
		statsGap: cmp.Or(opt.LinkStatsEvery, 25),
		holdFor:  opt.SBUSFailsafeAfter,
		link:     DefaultLinkStats(),
	}
	s.init(n)
	s.timer = ex.Every(s.period, s.send)
	return s, nil
}

// Protocol returns what the receiver sends.
func (s *Serial) Protocol() rc.Protocol { return s.proto }

// Period returns the frame period.
func (s *Serial) Period() time.Duration { return s.period }

// Close stops sending. It may be called from any goroutine.
func (s *Serial) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.timer.Stop()
}

// SetFlags sets the SBUS frame-lost and failsafe flags of the frames that
// follow (other protocols have none and ignore them).
func (s *Serial) SetFlags(frameLost, failsafe bool) {
	s.mu.Lock()
	s.frameLost, s.failsafe = frameLost, failsafe
	s.mu.Unlock()
}

// SetLinkStats sets the CRSF link statistics sent from now on.
func (s *Serial) SetLinkStats(l rc.LinkStats) {
	s.mu.Lock()
	s.link = l
	s.mu.Unlock()
}

// SetLink sets the CRSF uplink RSSI (dBm, negative; both antennas) and link
// quality (%), keeping the other statistics.
func (s *Serial) SetLink(rssiDBm, lq int) error {
	if rssiDBm > 0 || rssiDBm < -255 {
		return fmt.Errorf("rctx: RSSI %d dBm, want -255 to 0", rssiDBm)
	}
	if lq < 0 || lq > 100 {
		return fmt.Errorf("rctx: link quality %d %%, want 0 to 100", lq)
	}
	s.mu.Lock()
	s.link.UplinkRSSI1, s.link.UplinkRSSI2 = uint8(-rssiDBm), uint8(-rssiDBm)
	s.link.UplinkLQ = uint8(lq)
	s.mu.Unlock()
	return nil
}

// LinkStats returns the CRSF link statistics being sent.
func (s *Serial) LinkStats() rc.LinkStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.link
}

// SetNoise puts n random bytes on the line halfway between frames from now
// on, drawn from a generator seeded with seed; n = 0 stops it. Noise does
// not depend on the link: it is the wire picking up interference.
func (s *Serial) SetNoise(n int, seed uint64) error {
	if n < 0 {
		return fmt.Errorf("rctx: %d noise bytes, want 0 or more", n)
	}
	s.mu.Lock()
	s.noise = n
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
	s.mu.Unlock()
	return nil
}

// InjectNoise writes b on the line now.
func (s *Serial) InjectNoise(b []byte) error {
	_, err := s.port.Write(b)
	return err
}

// Frames returns how many channel frames were written.
func (s *Serial) Frames() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frames
}

// Err returns the last error writing to the port, nil if none.
func (s *Serial) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// send is the frame timer's callback.
func (s *Serial) send() {
	us, up := s.snapshot()
	now := s.ex.Now()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if !up && !s.lost {
		s.lost, s.lostAt = true, now
	}
	if up {
		s.lost = false
	}
	frameLost, failsafe := s.frameLost, s.failsafe
	holding := !up && s.proto == rc.SBUS && s.holdFor > 0
	if holding {
		frameLost = true
		failsafe = failsafe || now.Sub(s.lostAt) >= s.holdFor
	}
	sending := up || holding
	if sending {
		s.buf = s.encode(s.buf[:0], &us, frameLost, failsafe)
		s.frames++
	}
	noise := s.noise
	s.mu.Unlock()
	if sending {
		if s.proto == rc.CRSF {
			s.maybeLinkStats()
		}
		s.write(s.buf)
	}
	if noise > 0 {
		s.ex.After(s.period/2, s.writeNoise)
	}
}

// encode appends the channel frame for us to dst, with SBUS's flags; s.mu
// must be held.
func (s *Serial) encode(dst []byte, us *[rc.MaxChannels]uint16, frameLost, failsafe bool) []byte {
	switch s.proto {
	case rc.SBUS:
		f := rc.SBUSFrame{FrameLost: frameLost, Failsafe: failsafe}
		for i := range f.Raw {
			f.Raw[i] = rc.MicrosToSBUS(us[i])
		}
		return f.Append(dst)
	case rc.IBUS:
		var f rc.IBUSFrame
		copy(f.Micros[:], us[:rc.IBUSChannels])
		return f.Append(dst)
	default:
		var raw [rc.CRSFChannels]uint16
		for i := range raw {
			raw[i] = rc.MicrosToCRSF(us[i])
		}
		return rc.AppendCRSFChannels(dst, s.addr, &raw)
	}
}

// maybeLinkStats sends a LINK_STATISTICS frame before every statsGap-th
// channel frame, starting with the first, so that every channel frame has
// link statistics before it.
func (s *Serial) maybeLinkStats() {
	s.mu.Lock()
	due := s.sinceLink == 0
	s.sinceLink = (s.sinceLink + 1) % s.statsGap
	l := s.link
	s.mu.Unlock()
	if due {
		s.write(rc.AppendCRSFLinkStats(nil, s.addr, &l))
	}
}

func (s *Serial) writeNoise() {
	s.mu.Lock()
	if s.noise == 0 || s.closed {
		s.mu.Unlock()
		return
	}
	b := make([]byte, s.noise)
	for i := range b {
		b[i] = byte(s.rng.Uint32())
	}
	s.mu.Unlock()
	s.write(b)
}

func (s *Serial) write(b []byte) {
	if _, err := s.port.Write(b); err != nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
}
