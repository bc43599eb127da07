package joystick

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/router"
)

func TestEventRoundTrip(t *testing.T) {
	// js_event for axis 3 at -12345, time 0x01020304 ms, as the kernel
	// lays it out on a little-endian machine.
	wire := []byte{0x04, 0x03, 0x02, 0x01, 0xC7, 0xCF, 0x02, 0x03}
	e, err := ParseEvent(wire)
	if err != nil {
		t.Fatal(err)
	}
	if e != (Event{TimeMs: 0x01020304, Value: -12345, Type: TypeAxis, Number: 3}) {
		t.Fatalf("parsed %+v", e)
	}
	if got := AppendEvent(nil, e); !bytes.Equal(got, wire) {
		t.Fatalf("appended % x, want % x", got, wire)
	}
	if _, err := ParseEvent(wire[:7]); err == nil {
		t.Fatal("a 7-byte event parsed")
	}
	init := Event{Type: TypeButton | TypeInit}
	if !init.Init() || init.Kind() != TypeButton {
		t.Fatalf("init event %+v: Init %v Kind %#x", init, init.Init(), init.Kind())
	}
}

func TestDecoderPartialReads(t *testing.T) {
	var stream []byte
	var want []Event
	for i := 0; i < 5; i++ {
		e := Event{TimeMs: uint32(i * 10), Value: int16(i*1000 - 2000), Type: TypeAxis, Number: uint8(i)}
		want = append(want, e)
		stream = AppendEvent(stream, e)
	}
	var d Decoder
	var got []Event
	for _, n := range []int{3, 8, 1, 12, 16} { // chunks across event boundaries
		got = d.Feed(got, stream[:n])
		stream = stream[n:]
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		v    int16
		want float64
	}{{0, 0}, {32767, 1}, {-32767, -1}, {-32768, -1}, {16384, 16384.0 / 32767}} {
		if got := Normalize(tc.v); got != tc.want {
			t.Errorf("Normalize(%d) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// sink records what the joystick submits.
type sink struct {
	mu  sync.Mutex
	ins []router.Input
}

func (s *sink) Submit(in router.Input) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ins = append(s.ins, in)
	return nil
}

func (s *sink) last() (router.Input, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ins) == 0 {
		return router.Input{}, 0
	}
	return s.ins[len(s.ins)-1], len(s.ins)
}

// running returns a wall-clock executor running until the test ends.
func running(t *testing.T) *executor.Executor {
	ex := bustest.RunExecutor(t)
	return ex
}

func status(t *testing.T, ex *executor.Executor, j *Joystick) (st Status) {
	t.Helper()
	if err := ex.Do(context.Background(), func() { st = j.Status() }); err != nil {
		t.Fatal(err)
	}
	return st
}

func write(t *testing.T, w io.Writer, evs ...Event) {
	t.Helper()
	var b []byte
	for _, e := range evs {
		b = AppendEvent(b, e)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestFIFO reads js_events written into a FIFO, as from /dev/input/js0:
// the initial state, then changes; the state is repeated while nothing
// changes; the writer going away is an unplugged joystick, and a new
// writer is the joystick plugged back in.
func TestFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "js0")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// O_RDWR opens a FIFO without waiting for a reader.
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	ex := running(t)
	s := &sink{}
	j, err := New(Options{Exec: ex, Device: path, Router: s, Repeat: 20 * time.Millisecond,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Do(context.Background(), func() { _ = j.Start() }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Do(context.Background(), j.Stop) })

	write(t, w,
		Event{Type: TypeAxis | TypeInit, Number: 0}, Event{Type: TypeAxis | TypeInit, Number: 1},
		Event{Type: TypeButton | TypeInit, Number: 0},
		Event{TimeMs: 1000, Type: TypeAxis, Number: 1, Value: -32767},
		Event{TimeMs: 1010, Type: TypeAxis, Number: 0, Value: 16384},
		Event{TimeMs: 1020, Type: TypeButton, Number: 0, Value: 1})
	var n int
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		var in router.Input
		in, n = s.last()
		if in.Source != "joystick" || in.Subject != "js0" || in.Values["axis_1"] != -1 || in.Values["button_0"] != 1 ||
			in.Values["axis_0"] != 16384.0/32767 || len(in.Values) != 3 {
			return errors.New("joystick state not submitted yet")
		}
		return nil
	})
	// Nothing changes, yet the state keeps coming.
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if _, m := s.last(); m < n+3 {
			return errors.New("state not repeated")
		}
		return nil
	})

	// Unplugged.
	_ = w.Close()
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		if st := status(t, ex, j); st.Connected || len(st.Values) != 0 {
			return errors.New("still connected")
		}
		return nil
	})
	// Plugged back in: a new writer, a new state.
	w2, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	bustest.CheckFor(t, 5*time.Second, 5*time.Millisecond, func() error {
		write(t, w2, Event{Type: TypeButton, Number: 3, Value: 1})
		in, _ := s.last()
		if in.Values["button_3"] != 1 || status(t, ex, j).Opens < 2 {
			return errors.New("not reconnected")
		}
		return nil
	})
	if in, _ := s.last(); len(in.Values) != 1 {
		t.Errorf("after reconnecting: %v, want only what the new device said", in.Values)
	}
}

// unplugging reads a few events, then fails as an unplugged device does.
type unplugging struct {
	data []byte
}

func (u *unplugging) Read(p []byte) (int, error) {
	if len(u.data) == 0 {
		return 0, syscall.ENODEV
	}
	n := copy(p, u.data)
	u.data = u.data[n:]
	return n, nil
}

func (u *unplugging) Close() error { return nil }

// TestUnpluggedReopensWithBackoff: ENODEV ends the device; opens that fail
// are retried, further and further apart, until the device is back.
func TestUnpluggedReopensWithBackoff(t *testing.T) {
	ex := running(t)
	s := &sink{}
	var err error
	var mu sync.Mutex
	var waits []time.Duration // the backoff in force at each open
	var j *Joystick
	open := func(string) (io.ReadCloser, error) {
		var wait time.Duration
		_ = ex.Do(context.Background(), func() { wait = j.backoff })
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, wait)
		switch len(waits) {
		case 1, 5:
			return &unplugging{data: AppendEvent(nil, Event{Type: TypeAxis, Number: 2, Value: 32767})}, nil
		}
		return nil, syscall.ENOENT
	}
	j, err = New(Options{Exec: ex, Device: "/dev/input/js1", Router: s, Open: open,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Do(context.Background(), func() { _ = j.Start() }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ex.Do(context.Background(), j.Stop) })
	bustest.CheckFor(t, 10*time.Second, 5*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(waits) < 6 {
			return errors.New("not reopened enough")
		}
		return nil
	})
	if in, _ := s.last(); in.Values["axis_2"] != 1 || in.Subject != "js1" {
		t.Fatalf("last input %+v", in)
	}
	mu.Lock()
	defer mu.Unlock()
	// Unplugged: retry after the shortest wait, doubling while the opens
	// fail; once it was back and went again, the shortest wait again.
	want := []time.Duration{5, 10, 20, 40, 5}
	for i, w := range want {
		if waits[i+1] != w*time.Millisecond {
			t.Fatalf("backoff at each open %v, want %v ms after the first", waits, want)
		}
	}
}
