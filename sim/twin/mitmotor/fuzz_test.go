package mitmotor_test

import (
	"math"
	"testing"
	"time"

	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/can/cantest"
	drv "github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/sim/twin/mitmotor"
)

// FuzzTwin sends the twin arbitrary frames: it never panics, answers only
// frames addressed to it, every answer is a well-formed reply from its id,
// and the torque it applies stays within its model's range.
func FuzzTwin(f *testing.F) {
	f.Add(uint32(1), false, uint8(8), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc})
	f.Add(uint32(1), false, uint8(8), []byte{0x8a, 0x3c, 0x83, 0xe1, 0x99, 0x33, 0x39, 0x54})
	f.Add(uint32(2), true, uint8(3), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, id uint32, ext bool, n uint8, data []byte) {
		ex := executor.NewVirtual()
		bus := cantest.New(ex.Clock())
		d, err := mitmotor.New(bus, ex, mitmotor.Options{ID: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		d.SetState(0.3, -1)
		// Enabled first, so commands act.
		if err := bus.Inject(drv.SpecialFrame(1, drv.SpecialEnable), ex.Now()); err != nil {
			t.Fatal(err)
		}
		fr := can.Frame{ID: id & 0x7FF, Extended: ext, Length: n % 9}
		if ext {
			fr.ID = id & 0x1FFFFFFF
		}
		copy(fr.Data[:], data)
		before := len(bus.Sent())
		if err := bus.Inject(fr, ex.Now()); err != nil {
			return // a frame no controller would put on the wire
		}
		if err := ex.RunFor(t.Context(), 3*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		// What the twin sent (Inject's frames are not in Sent).
		replies := bus.Sent()
		addressed := !ext && fr.ID == 1
		if !addressed && len(replies) != before {
			t.Fatalf("answered %+v, not addressed to it", fr)
		}
		for _, r := range replies {
			rep, err := d.Model().DecodeReply(r)
			if err != nil || rep.ID != 1 {
				t.Fatalf("reply %+v: %+v, %v", r, rep, err)
			}
		}
		m := d.Model()
		if tau := d.Torque(); math.IsNaN(tau) || tau < m.Torque.Min || tau > m.Torque.Max {
			t.Fatalf("torque %v outside %v after %+v", tau, m.Torque, fr)
		}
	})
}
