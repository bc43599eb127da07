package rc

import (
	"math"
	"testing"
)

// FuzzParse: any file either parses to a configuration that validates,
// marshals and parses back to itself, or is refused with a field error;
// nothing panics, and every channel normalises into its range.
func FuzzParse(f *testing.F) {
	f.Add(Marshal(DefaultConfig()))
	f.Add([]byte("rc_receiver:\n  protocol: crsf\n  channels: [{number: 3, min: 990, max: 2010, center: 1500, reversed: true}]\n"))
	f.Add([]byte("rc_receiver: {enabled: false, protocol: ppm, gpio: {ppm_pin: 4}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("error %T %v is not a *FieldError", err, err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
		back, err := Parse(Marshal(c))
		if err != nil {
			t.Fatalf("marshalled config does not parse: %v\n%s", err, Marshal(c))
		}
		if err := back.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Channels {
			for _, us := range []uint16{0, uint16(ch.Min), uint16(ch.Center), uint16(ch.Max), 3000} {
				n := ch.Normalize(us)
				lo := -1.0
				if ch.Type == TypeSwitch {
					lo = 0
				}
				if math.IsNaN(n) || n < lo || n > 1 {
					t.Fatalf("channel %+v normalises %d µs to %v", ch, us, n)
				}
			}
		}
	})
}
