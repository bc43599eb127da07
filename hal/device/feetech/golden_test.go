package feetech

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/uart/uarttest"
)

// drain runs everything the executor has queued and lets virtual time pass
// so that timeouts fire.
func drain(t testing.TB, ex *executor.Executor) {
	t.Helper()
	if err := ex.RunFor(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
}

// The request bytes below are worked out by hand from the packet format
// (checksum = ^(ID + LEN + INSTR + params)), not produced by Encode.
func TestGoldenBytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model Model
		steps []uarttest.IO
		call  func(b *Bus, done func(any, error))
		want  any
	}{{
		name:  "ping",
		steps: []uarttest.IO{{W: h("FF FF 01 02 01 FB"), R: h("FF FF 01 02 00 FC")}},
		call:  func(b *Bus, done func(any, error)) { b.Ping(1, func(err error) { done(nil, err) }) },
	}, {
		name:  "read present position",
		steps: []uarttest.IO{{W: h("FF FF 01 04 02 38 02 BE"), R: h("FF FF 01 04 00 00 08 F2")}},
		call: func(b *Bus, done func(any, error)) {
			b.ReadRegister(1, RegPresentPosition, 2, func(d []byte, _ time.Time, err error) { done(fmt.Sprintf("% X", d), err) })
		},
		want: "00 08",
	}, {
		name:  "write goal STS",
		steps: []uarttest.IO{{W: h("FF FF 01 09 03 2A 00 08 00 00 E8 03 D5"), R: h("FF FF 01 02 00 FC")}},
		call: func(b *Bus, done func(any, error)) {
			b.SetGoal(Goal{ID: 1, Position: 2048, Speed: 1000}, func(err error) { done(nil, err) })
		},
	}, {
		name:  "write goal SCS (big-endian)",
		model: SCS,
		steps: []uarttest.IO{{W: h("FF FF 01 09 03 2A 02 00 00 00 03 E8 DB"), R: h("FF FF 01 02 00 FC")}},
		call: func(b *Bus, done func(any, error)) {
			b.SetGoal(Goal{ID: 1, Position: 512, Speed: 1000}, func(err error) { done(nil, err) })
		},
	}, {
		name:  "sync write goals",
		steps: []uarttest.IO{{W: h("FF FF FE 12 83 2A 06 01 00 08 00 00 E8 03 02 00 04 00 00 F4 01 4D"), R: nil}},
		call: func(b *Bus, done func(any, error)) {
			b.SyncGoals([]Goal{{ID: 1, Position: 2048, Speed: 1000}, {ID: 2, Position: 1024, Speed: 500}},
				func(err error) { done(nil, err) })
		},
	}, {
		name: "reg write then broadcast action",
		steps: []uarttest.IO{
			{W: h("FF FF 03 04 04 28 01 CB"), R: h("FF FF 03 02 00 FA")},
			{W: h("FF FF FE 02 05 FA"), R: nil},
		},
		call: func(b *Bus, done func(any, error)) {
			b.RegWrite(3, RegTorqueEnable, []byte{1}, func(err error) {
				if err != nil {
					done(nil, err)
					return
				}
				b.Action(Broadcast, func(err error) { done(nil, err) })
			})
		},
	}, {
		name:  "sync read",
		steps: []uarttest.IO{{W: h("FF FF FE 06 82 38 02 01 02 3C"), R: h("FF FF 01 04 00 00 08 F2 FF FF 02 04 00 00 04 F5")}},
		call: func(b *Bus, done func(any, error)) {
			b.SyncRead([]uint8{1, 2}, RegPresentPosition, 2, func(d [][]byte, _ time.Time, err error) {
				done(fmt.Sprintf("% X", d), err)
			})
		},
		want: "[00 08 00 04]",
	}, {
		name:  "read present block",
		steps: []uarttest.IO{{W: h("FF FF 01 04 02 38 0B B5"), R: h("FF FF 01 0D 00 00 08 64 80 FA 04 4A 1F 00 00 01 9D")}},
		call: func(b *Bus, done func(any, error)) {
			b.ReadPresent(1, func(p Present, err error) { p.At = time.Time{}; done(p, err) })
		},
		want: Present{Position: 2048, Speed: -100, Load: -250, Voltage: 7.4, Temperature: 31, Moving: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ex := executor.NewVirtual()
			p := &uarttest.Playback{Ops: tc.steps}
			b, err := New(p, ex, &Options{Model: tc.model})
			if err != nil {
				t.Fatal(err)
			}
			if baud := p.Config().Baud; baud != DefaultBaud {
				t.Errorf("baud %d, want %d", baud, DefaultBaud)
			}
			var got any
			var gotErr error
			called := 0
			tc.call(b, func(v any, err error) { got, gotErr = v, err; called++ })
			drain(t, ex)
			if called != 1 || gotErr != nil {
				t.Fatalf("done called %d times, err %v", called, gotErr)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if err := p.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestStatusErrorAndBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply []byte
		want  error
	}{
		{"overheat and overload", h("FF FF 01 02 24 D8"), &StatusError{ID: 1, Bits: ErrOverheat | ErrOverload}},
		{"bad checksum", h("FF FF 01 02 00 FD"), ErrChecksum},
		{"no answer", nil, ErrTimeout},
		{"another servo answers", h("FF FF 02 02 00 FB"), ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := executor.NewVirtual()
			p := &uarttest.Playback{Ops: []uarttest.IO{{W: h("FF FF 01 02 01 FB"), R: tc.reply}}}
			b, err := New(p, ex, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := ex.Now()
			var got error
			var at time.Time
			b.Ping(1, func(err error) { got, at = err, ex.Now() })
			drain(t, ex)
			var se *StatusError
			if errors.As(tc.want, &se) {
				var gse *StatusError
				if !errors.As(got, &gse) || *gse != *se {
					t.Fatalf("err = %v, want %v", got, tc.want)
				}
				return
			}
			if !errors.Is(got, tc.want) {
				t.Fatalf("err = %v, want %v", got, tc.want)
			}
			if d := at.Sub(start); d != DefaultTimeout {
				t.Errorf("gave up after %v of executor time, want %v", d, DefaultTimeout)
			}
		})
	}
}

// A line that echoes the driver's own bytes (one wire, no direction switch)
// must not be mistaken for the answer.
func TestEchoIsSkipped(t *testing.T) {
	ex := executor.NewVirtual()
	p := &uarttest.Playback{Ops: []uarttest.IO{{W: h("FF FF 01 04 02 38 02 BE"), R: h("FF FF 01 04 02 38 02 BE FF FF 01 04 00 FF 0F EC")}}}
	b, err := New(p, ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	b.ReadRegister(1, RegPresentPosition, 2, func(d []byte, _ time.Time, err error) {
		if err != nil {
			t.Error(err)
		}
		got = d
	})
	drain(t, ex)
	if !bytes.Equal(got, []byte{0xFF, 0x0F}) {
		t.Errorf("got % X, want FF 0F", got)
	}
}

func TestArgumentErrors(t *testing.T) {
	ex := executor.NewVirtual()
	p := &uarttest.Playback{}
	b, err := New(p, ex, &Options{Model: SCS})
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	collect := func(err error) { errs = append(errs, err) }
	b.Ping(Broadcast, collect)
	b.Ping(0xFF, collect)
	b.SetGoal(Goal{ID: 1, Position: 1024}, collect) // SCS tops out at 1023
	b.SetGoal(Goal{ID: 1, Position: 10, Speed: -1}, collect)
	b.SyncWrite(RegGoalPosition, nil, collect)
	b.SyncWrite(RegGoalPosition, []SyncData{{1, []byte{1}}, {2, []byte{1, 2}}}, collect)
	b.WriteRegister(1, RegTorqueEnable, nil, collect)
	b.SyncRead([]uint8{1}, RegPresentPosition, 2, func(_ [][]byte, _ time.Time, err error) { collect(err) })
	b.ReadRegister(1, 0, 0, func(_ []byte, _ time.Time, err error) { collect(err) })
	drain(t, ex)
	if len(errs) != 9 {
		t.Fatalf("%d callbacks, want 9", len(errs))
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d succeeded", i)
		}
	}
	if err := p.Close(); err != nil {
		t.Error(err) // nothing may reach the line
	}
	if _, err := New(p, ex, &Options{Model: 7}); err == nil {
		t.Error("New accepted model 7")
	}
}

func TestCloseFailsQueued(t *testing.T) {
	ex := executor.NewVirtual()
	p := &uarttest.Playback{Ops: []uarttest.IO{{W: h("FF FF 01 02 01 FB"), R: nil}}}
	b, _ := New(p, ex, nil)
	var errs []error
	b.Ping(1, func(err error) { errs = append(errs, err) })
	b.Ping(2, func(err error) { errs = append(errs, err) })
	b.Close()
	b.Ping(3, func(err error) { errs = append(errs, err) })
	drain(t, ex)
	if len(errs) != 3 {
		t.Fatalf("%d callbacks, want 3", len(errs))
	}
	for _, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("err = %v, want ErrClosed", err)
		}
	}
}

func TestSigned(t *testing.T) {
	for _, tc := range []struct {
		v    int
		bit  uint
		want uint16
	}{{100, 15, 0x0064}, {-100, 15, 0x8064}, {-250, 10, 0x04FA}, {2000, 10, 0x03FF}, {-40000, 15, 0xFFFF}} {
		if got := EncodeSigned(tc.v, tc.bit); got != tc.want {
			t.Errorf("EncodeSigned(%d, %d) = %#x, want %#x", tc.v, tc.bit, got, tc.want)
		}
	}
	if got := DecodeSigned(0x84FA, 10); got != -250 {
		t.Errorf("DecodeSigned(0x84FA, 10) = %d, want −250 (bits above the sign ignored)", got)
	}
}

func TestModelAngles(t *testing.T) {
	const tol = 1e-9
	if got := STS.Radians(3072); got-1.5707963267948966 > tol || got-1.5707963267948966 < -tol {
		t.Errorf("STS.Radians(3072) = %v, want π/2", got)
	}
	if got := SCS.Steps(150 * 3.141592653589793 / 180); got != 1023 {
		t.Errorf("SCS.Steps(150°) = %d, want 1023 (clamped)", got)
	}
	if got := STS.Steps(STS.Radians(1234)); got != 1234 {
		t.Errorf("STS round trip gives %d, want 1234", got)
	}
}

func h(s string) []byte {
	var b []byte
	for _, f := range bytes.Fields([]byte(s)) {
		var v byte
		if _, err := fmt.Sscanf(string(f), "%02X", &v); err != nil {
			panic(err)
		}
		b = append(b, v)
	}
	return b
}

// The bytes a read hands its caller stay the caller's: a later read does
// not overwrite them (a transaction keeps small answers inside itself).
func TestReadDataIsKept(t *testing.T) {
	ex := executor.NewVirtual()
	p := &uarttest.Playback{Ops: []uarttest.IO{
		{W: h("FF FF 01 04 02 38 02 BE"), R: h("FF FF 01 04 00 00 08 F2")},
		{W: h("FF FF 01 04 02 38 02 BE"), R: h("FF FF 01 04 00 FF 0F EC")},
	}}
	b, err := New(p, ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for range 2 {
		b.ReadRegister(1, RegPresentPosition, 2, func(d []byte, _ time.Time, err error) {
			if err != nil {
				t.Error(err)
			}
			got = append(got, d)
		})
	}
	drain(t, ex)
	if len(got) != 2 || fmt.Sprintf("% X", got[0]) != "00 08" || fmt.Sprintf("% X", got[1]) != "FF 0F" {
		t.Fatalf("reads gave %X, want [00 08] then [FF 0F]", got)
	}
}
