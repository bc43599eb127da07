package cantest

import (
	"errors"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/clock"
)

func TestLoopback(t *testing.T) {
	clk := clock.NewVirtual(time.Time{})
	b := New(clk)
	type got struct {
		f  can.Frame
		at time.Time
	}
	var a, c []got
	stopA := b.Receive(func(f can.Frame, at time.Time) { a = append(a, got{f, at}) })
	b.Receive(func(f can.Frame, at time.Time) { c = append(c, got{f, at}) })

	// VESC "set RPM" to controller 68: extended id (command 3 << 8 | 68).
	f := can.Frame{ID: 3<<8 | 68, Extended: true, Length: 4, Data: [8]byte{0, 0, 0x03, 0xE8}}
	clk.Advance(time.Millisecond)
	if err := b.Send(f); err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || len(c) != 1 || a[0].f != f || !a[0].at.Equal(clock.Epoch().Add(time.Millisecond)) {
		t.Fatalf("receivers got %v and %v", a, c)
	}
	stopA()
	stopA()
	if err := b.Inject(can.Frame{ID: 0x300, Length: 0}, clock.Epoch()); err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || len(c) != 2 {
		t.Errorf("after stop: %d and %d frames, want 1 and 2", len(a), len(c))
	}
	if s := b.Sent(); len(s) != 1 || s[0] != f {
		t.Errorf("Sent() = %v, want only the sent frame", s)
	}
}

func TestReceiverMayAnswer(t *testing.T) {
	b := New(nil)
	var answers int
	// A twin that answers every request on 0x100 with a frame on 0x101.
	b.Receive(func(f can.Frame, _ time.Time) {
		if f.ID == 0x100 {
			if err := b.Send(can.Frame{ID: 0x101}); err != nil {
				t.Error(err)
			}
		}
		if f.ID == 0x101 {
			answers++
		}
	})
	if err := b.Send(can.Frame{ID: 0x100}); err != nil {
		t.Fatal(err)
	}
	if answers != 1 {
		t.Errorf("answer delivered %d times before Send returned, want 1", answers)
	}
}

func TestValidate(t *testing.T) {
	b := New(nil)
	for _, tc := range []struct {
		f  can.Frame
		ok bool
	}{
		{can.Frame{ID: 0x7FF, Length: 8}, true},
		{can.Frame{ID: 0x800}, false},
		{can.Frame{ID: 0x800, Extended: true}, true},
		{can.Frame{ID: 1 << 29, Extended: true}, false},
		{can.Frame{ID: 1, Length: 9}, false},
	} {
		err := b.Send(tc.f)
		if (err == nil) != tc.ok {
			t.Errorf("Send(%+v) = %v, want ok %v", tc.f, err, tc.ok)
		}
		if err := b.Inject(tc.f, time.Time{}); (err == nil) != tc.ok {
			t.Errorf("Inject(%+v) = %v, want ok %v", tc.f, err, tc.ok)
		}
	}
}

func TestFail(t *testing.T) {
	b := New(nil)
	busOff := errors.New("bus off")
	b.Fail(busOff)
	if err := b.Send(can.Frame{ID: 1}); !errors.Is(err, busOff) {
		t.Errorf("Send = %v, want %v", err, busOff)
	}
	b.Fail(nil)
	if err := b.Send(can.Frame{ID: 1}); err != nil || len(b.Sent()) != 1 {
		t.Errorf("Send after Fail(nil) = %v, sent %d", err, len(b.Sent()))
	}
}

// With recording off frames still reach the receivers, and Sent stays
// empty.
func TestSendWithoutRecording(t *testing.T) {
	b := New(nil)
	b.SetRecording(false)
	var got []can.Frame
	b.Receive(func(f can.Frame, _ time.Time) { got = append(got, f) })
	if err := b.Send(can.Frame{ID: 7}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(b.Sent()) != 0 {
		t.Errorf("delivered %d, recorded %d", len(got), len(b.Sent()))
	}
	b.SetRecording(true)
	_ = b.Send(can.Frame{ID: 8})
	if s := b.Sent(); len(s) != 1 || s[0].ID != 8 {
		t.Errorf("recording back on: sent %+v", s)
	}
}
