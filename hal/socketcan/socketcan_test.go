package socketcan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	ecan "go.einride.tech/can"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
)

// guard bounds waits on the reader goroutine; it is not a timing assertion.
const guard = 10 * time.Second

// wire builds a struct can_frame as the kernel lays it out: can_id with the
// EFF (bit 31), RTR (30) and ERR (29) flags, little-endian on the Pi and on
// x86; the length code; three bytes of padding; eight data bytes.
func wire(id uint32, flags uint32, data ...byte) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b, id|flags)
	b[4] = byte(len(data))
	copy(b[8:], data)
	return b
}

const (
	flagEFF = 0x80000000
	flagRTR = 0x40000000
	flagERR = 0x20000000
)

func frame(id uint32, ext bool, data ...byte) can.Frame {
	f := can.Frame{ID: id, Extended: ext, Length: uint8(len(data))}
	copy(f.Data[:], data)
	return f
}

func TestConversion(t *testing.T) {
	for _, f := range []can.Frame{
		frame(0x123, false, 1, 2, 3),
		frame(0x7FF, false),
		// A VESC SET_RPM (command 3) to controller 68: extended id 0x344.
		frame(0x344, true, 0x00, 0x00, 0x0B, 0xB8),
		frame(0x1FFFFFFF, true, 1, 2, 3, 4, 5, 6, 7, 8),
		{ID: 0x10, Remote: true, Length: 4},
	} {
		ef, err := toEinride(f)
		if err != nil {
			t.Fatalf("toEinride(%+v): %v", f, err)
		}
		if ef.ID != f.ID || ef.IsExtended != f.Extended || ef.IsRemote != f.Remote || ef.Length != f.Length || ef.Data != ecan.Data(f.Data) {
			t.Errorf("toEinride(%+v) = %+v", f, ef)
		}
		if back := fromEinride(ef); back != f {
			t.Errorf("round trip of %+v gave %+v", f, back)
		}
	}
}

func TestConversionRefusesWhatAControllerWould(t *testing.T) {
	for _, tc := range []struct {
		f    can.Frame
		want string
	}{
		{can.Frame{ID: 0x800, Length: 1}, "standard"},
		{can.Frame{ID: 0x20000000, Extended: true}, "extended"},
		{can.Frame{ID: 1, Length: 9}, "length 9"},
	} {
		if _, err := toEinride(tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("toEinride(%+v) = %v, want an error about %q", tc.f, err, tc.want)
		}
	}
	// Bytes beyond Length are not sent.
	f := can.Frame{ID: 1, Length: 2, Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	ef, _ := toEinride(f)
	if ef.Data != (ecan.Data{1, 2}) {
		t.Errorf("data % x, want 01 02 and zeros", ef.Data)
	}
	// A length code above 8 from the socket is clamped.
	if got := fromEinride(ecan.Frame{ID: 1, Length: 12}); got.Length != 8 {
		t.Errorf("length 12 received as %d, want 8", got.Length)
	}
}

// pipeBus runs a Bus over one end of an in-memory connection and returns
// the other end, the kernel's side.
func pipeBus(t *testing.T, clk clock.Clock) (*Bus, net.Conn) {
	t.Helper()
	ours, kernel := net.Pipe()
	b := New(ours, "can0", &Options{Clock: clk})
	t.Cleanup(func() {
		_ = kernel.Close()
		_ = b.Close()
	})
	return b, kernel
}

func TestSendWritesKernelFrames(t *testing.T) {
	b, kernel := pipeBus(t, nil)
	for _, tc := range []struct {
		f    can.Frame
		want []byte
	}{
		{frame(0x123, false, 0xDE, 0xAD), wire(0x123, 0, 0xDE, 0xAD)},
		{frame(0x344, true, 0x00, 0x00, 0x0B, 0xB8), wire(0x344, flagEFF, 0x00, 0x00, 0x0B, 0xB8)},
		{can.Frame{ID: 0x10, Remote: true}, wire(0x10, flagRTR)},
	} {
		errc := make(chan error, 1)
		go func() { errc <- b.Send(tc.f) }()
		got := make([]byte, 16)
		if _, err := io.ReadFull(kernel, got); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("Send(%+v): %v", tc.f, err)
		}
		if !bytes.Equal(got, tc.want) {
			t.Errorf("Send(%+v) wrote\n% x\nwant\n% x", tc.f, got, tc.want)
		}
	}
	if err := b.Send(can.Frame{ID: 0x800}); err == nil || !strings.Contains(err.Error(), "can0") {
		t.Errorf("Send of an 12-bit standard id = %v, want an error naming can0", err)
	}
}

type stamped struct {
	f  can.Frame
	at time.Time
}

func TestReceiveStampsFrames(t *testing.T) {
	clk := clock.NewVirtual(clock.Epoch())
	b, kernel := pipeBus(t, clk)
	got := make(chan stamped, 16)
	stop := b.Receive(func(f can.Frame, at time.Time) { got <- stamped{f, at} })
	defer stop()
	for _, tc := range []struct {
		raw  []byte
		want can.Frame
	}{
		{wire(0x123, 0, 1, 2, 3), frame(0x123, false, 1, 2, 3)},
		// A VESC status frame (STATUS, command 9) from controller 56.
		{wire(0x938, flagEFF, 0, 0, 0x0B, 0xB8, 0, 0x2A, 0x01, 0xF4), frame(0x938, true, 0, 0, 0x0B, 0xB8, 0, 0x2A, 0x01, 0xF4)},
		{wire(0x55, flagRTR), can.Frame{ID: 0x55, Remote: true}},
	} {
		clk.Advance(time.Millisecond)
		if _, err := kernel.Write(tc.raw); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-got:
			if s.f != tc.want {
				t.Errorf("received %+v, want %+v", s.f, tc.want)
			}
			if !s.at.Equal(clk.Now()) {
				t.Errorf("stamped %v, want the clock at arrival %v", s.at, clk.Now())
			}
		case <-time.After(guard):
			t.Fatal("frame not delivered")
		}
	}
}

func TestReceiveSkipsErrorFramesAndStops(t *testing.T) {
	b, kernel := pipeBus(t, nil)
	first := make(chan can.Frame, 16)
	second := make(chan can.Frame, 16)
	stopFirst := b.Receive(func(f can.Frame, _ time.Time) { first <- f })
	stopSecond := b.Receive(func(f can.Frame, _ time.Time) { second <- f })
	defer stopSecond()
	// An error frame (bus-off, class 0x40), then a data frame: only the
	// data frame arrives, so the error frame was skipped, not delayed.
	if _, err := kernel.Write(wire(0x40, flagERR)); err != nil {
		t.Fatal(err)
	}
	if _, err := kernel.Write(wire(0x1, 0, 9)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []chan can.Frame{first, second} {
		select {
		case f := <-c:
			if f != frame(0x1, false, 9) {
				t.Errorf("received %+v, want the data frame 0x1", f)
			}
		case <-time.After(guard):
			t.Fatal("frame not delivered")
		}
	}
	stopFirst()
	stopFirst()
	if _, err := kernel.Write(wire(0x2, 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
	case <-time.After(guard):
		t.Fatal("frame not delivered to the remaining receiver")
	}
	// The frame reached the remaining receiver, so the reader is past it:
	// a stopped receiver would have had it by now.
	if len(first) != 0 {
		t.Errorf("stopped receiver got %d frames", len(first))
	}
}

func TestReaderReportsALostConnection(t *testing.T) {
	b, kernel := pipeBus(t, nil)
	if b.Err() != nil {
		t.Fatalf("Err on a live bus: %v", b.Err())
	}
	_ = kernel.Close()
	bustest.CheckFor(t, guard, time.Millisecond, func() error {
		if b.Err() == nil {
			return io.ErrNoProgress
		}
		return nil
	})
	if err := b.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Errorf("Close: %v", err)
	}
	// Close after the reader has ended does not hang, and a second is a
	// no-op.
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSendGivesUpOnAFullQueue(t *testing.T) {
	// Nobody reads the kernel's side: the frame never leaves.
	ours, kernel := net.Pipe()
	defer kernel.Close()
	b := New(ours, "can0", &Options{SendTimeout: time.Millisecond})
	defer b.Close()
	err := b.Send(frame(0x1, false, 1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), "can0") {
		t.Errorf("Send with no room = %v, want a timeout naming can0", err)
	}
}
