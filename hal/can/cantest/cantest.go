package cantest

import (
	"fmt"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/internal/callbacks"
)

// Bus is a loopback CAN bus. It implements can.Bus.
//
// Receivers are called synchronously, in the order they subscribed, on the
// goroutine that sent the frame, after Send has recorded it. They may send
// on the bus themselves (a twin answering a request); that delivery happens
// before the outer Send returns.
//
// The zero value is not usable; call New. Methods are safe for concurrent
// use.
type Bus struct {
	clk clock.Clock

	mu       sync.Mutex
	rx       callbacks.Set[func(can.Frame, time.Time)]
	sent     []can.Frame
	noRecord bool // SetRecording(false): Send keeps no record
	fail     error
}

// New returns an empty bus whose frames are stamped by clk; nil means a clock
// that stays at clock.Epoch().
func New(clk clock.Clock) *Bus {
	if clk == nil {
		clk = clock.NewVirtual(time.Time{})
	}
	return &Bus{clk: clk}
}

// Send implements can.Bus. A frame a real controller would refuse (more than
// 8 bytes, an id too wide for its format) is an error and is not sent.
func (b *Bus) Send(f can.Frame) error {
	if err := Validate(f); err != nil {
		return err
	}
	b.mu.Lock()
	if b.fail != nil {
		err := b.fail
		b.mu.Unlock()
		return err
	}
	if !b.noRecord {
		b.sent = append(b.sent, f)
	}
	b.deliver(f, b.clk.Now())
	return nil
}

// SetRecording turns the record of sent frames (Sent) on, the default, or
// off: a simulated robot's CAN bus carries thousands of frames a second
// for hours.
func (b *Bus) SetRecording(on bool) {
	b.mu.Lock()
	b.noRecord = !on
	b.mu.Unlock()
}

// Inject delivers f to the receivers as if another node had sent it at at.
// It is not added to Sent.
func (b *Bus) Inject(f can.Frame, at time.Time) error {
	if err := Validate(f); err != nil {
		return err
	}
	b.mu.Lock()
	b.deliver(f, at)
	return nil
}

// deliver calls every receiver with f; b.mu must be held and is released
// before the receivers run.
func (b *Bus) deliver(f can.Frame, at time.Time) {
	rx := b.rx.Snapshot()
	b.mu.Unlock()
	for _, fn := range rx {
		fn(f, at)
	}
}

// Receive implements can.Bus.
func (b *Bus) Receive(fn func(f can.Frame, at time.Time)) (stop func()) {
	return b.rx.Add(fn)
}

// Sent returns every frame sent with Send, oldest first.
func (b *Bus) Sent() []can.Frame {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]can.Frame(nil), b.sent...)
}

// Fail makes Send return err until Fail(nil), as a controller in bus-off
// does.
func (b *Bus) Fail(err error) {
	b.mu.Lock()
	b.fail = err
	b.mu.Unlock()
}

// Validate reports whether f is a frame a CAN controller would put on the
// wire: at most 8 data bytes and an id that fits 11 bits, or 29 when
// Extended.
func Validate(f can.Frame) error {
	if f.Length > 8 {
		return fmt.Errorf("cantest: frame length %d exceeds 8", f.Length)
	}
	limit, kind := uint32(1<<11-1), "standard"
	if f.Extended {
		limit, kind = 1<<29-1, "extended"
	}
	if f.ID > limit {
		return fmt.Errorf("cantest: id %#x does not fit a %s frame", f.ID, kind)
	}
	return nil
}

var _ can.Bus = (*Bus)(nil)
