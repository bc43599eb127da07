package socketcan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	ecan "go.einride.tech/can"
	esocketcan "go.einride.tech/can/pkg/socketcan"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
	"github.com/saint-os/saint/hal/internal/callbacks"
)

// Options configures a Bus. Nil means defaults.
type Options struct {
	// Clock stamps received frames; nil means clock.Real.
	Clock clock.Clock
	// SendTimeout bounds how long Send waits for room in the interface's
	// transmit queue; 0 means DefaultSendTimeout. A queue that stays full
	// that long means frames are not leaving (bus-off, nobody to
	// acknowledge), and a caller on an executor must not hang on it.
	SendTimeout time.Duration
}

// DefaultSendTimeout is Options.SendTimeout's default: about 50 frames'
// time at 500 kbit/s.
const DefaultSendTimeout = 100 * time.Millisecond

// Bus is a SocketCAN interface. It implements can.Bus. Methods are safe for
// concurrent use.
type Bus struct {
	name        string
	clk         clock.Clock
	sendTimeout time.Duration
	conn        net.Conn
	tx          *esocketcan.Transmitter

	txMu sync.Mutex // one frame on the socket at a time

	mu      sync.Mutex
	rx      callbacks.Set[func(can.Frame, time.Time)]
	readErr error
	closed  bool
	done    chan struct{} // closed when the reader goroutine ends
}

// Open opens a raw CAN socket on the network interface iface ("can0").
func Open(ctx context.Context, iface string, o *Options) (*Bus, error) {
	conn, err := esocketcan.DialContext(ctx, "can", iface)
	if err != nil {
		return nil, fmt.Errorf("socketcan: %s: %w (is the interface up? ip link set %s up type can bitrate 500000)", iface, err, iface)
	}
	return New(conn, iface, o), nil
}

// New runs a Bus over conn, a connection carrying SocketCAN frames; name
// goes into error messages. The Bus owns conn and closes it in Close.
func New(conn net.Conn, name string, o *Options) *Bus {
	if o == nil {
		o = &Options{}
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	timeout := o.SendTimeout
	if timeout <= 0 {
		timeout = DefaultSendTimeout
	}
	b := &Bus{
		name:        name,
		clk:         clk,
		sendTimeout: timeout,
		conn:        conn,
		tx:          esocketcan.NewTransmitter(conn),
		done:        make(chan struct{}),
	}
	go b.read(esocketcan.NewReceiver(conn))
	return b
}

// read delivers frames until the connection fails or closes.
func (b *Bus) read(r *esocketcan.Receiver) {
	defer close(b.done)
	for r.Receive() {
		if r.HasErrorFrame() {
			continue
		}
		at := b.clk.Now()
		f := fromEinride(r.Frame())
		for _, fn := range b.rx.Snapshot() {
			fn(f, at)
		}
	}
	b.mu.Lock()
	if !b.closed {
		b.readErr = r.Err()
		if b.readErr == nil {
			b.readErr = errors.New("connection closed")
		}
	}
	b.mu.Unlock()
}

// Name returns the interface name.
func (b *Bus) Name() string { return b.name }

// Send implements can.Bus. A frame a controller would refuse (more than 8
// bytes, an id too wide for its format) is an error and is not sent; so is a
// frame the interface has no room for within Options.SendTimeout.
func (b *Bus) Send(f can.Frame) error {
	ef, err := toEinride(f)
	if err != nil {
		return fmt.Errorf("socketcan: %s: %w", b.name, err)
	}
	b.txMu.Lock()
	defer b.txMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.sendTimeout)
	defer cancel()
	if err := b.tx.TransmitFrame(ctx, ef); err != nil {
		return fmt.Errorf("socketcan: %s: %w", b.name, err)
	}
	return nil
}

// Receive implements can.Bus. fn runs on the Bus's reader goroutine; stop
// removes it, after which it is not called again once a delivery in
// progress has returned.
func (b *Bus) Receive(fn func(f can.Frame, at time.Time)) (stop func()) {
	return b.rx.Add(fn)
}

// Err returns why the reader stopped before Close (the interface went away,
// the socket failed), or nil while it runs.
func (b *Bus) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readErr
}

// Close closes the socket and waits for the reader goroutine to end.
func (b *Bus) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	err := b.conn.Close()
	<-b.done
	return err
}

// Frame limits of classic CAN.
const (
	maxStandardID = 1<<11 - 1
	maxExtendedID = 1<<29 - 1
	maxLength     = 8
)

// toEinride converts a HAL frame to the library's, refusing what a
// controller would refuse.
func toEinride(f can.Frame) (ecan.Frame, error) {
	if f.Length > maxLength {
		return ecan.Frame{}, fmt.Errorf("frame length %d, want 0–8", f.Length)
	}
	limit, kind := uint32(maxStandardID), "standard (11-bit)"
	if f.Extended {
		limit, kind = maxExtendedID, "extended (29-bit)"
	}
	if f.ID > limit {
		return ecan.Frame{}, fmt.Errorf("id %#x does not fit a %s frame", f.ID, kind)
	}
	ef := ecan.Frame{ID: f.ID, Length: f.Length, IsExtended: f.Extended, IsRemote: f.Remote}
	// Bytes past Length are not part of the frame; send zeros, not
	// whatever the caller's array held.
	copy(ef.Data[:f.Length], f.Data[:f.Length])
	return ef, nil
}

// fromEinride converts a received frame to the HAL's. A length code above 8
// (a CAN FD length leaking through) is clamped to 8.
func fromEinride(ef ecan.Frame) can.Frame {
	n := ef.Length
	if n > maxLength {
		n = maxLength
	}
	f := can.Frame{ID: ef.ID, Extended: ef.IsExtended, Remote: ef.IsRemote, Length: n}
	copy(f.Data[:n], ef.Data[:n])
	return f
}

var _ can.Bus = (*Bus)(nil)
