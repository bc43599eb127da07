//go:build hardware

package smoketest

import (
	"errors"
	"strings"
	"testing"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/pi"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/hal/periph"
)

// i2cOnly is a board.Hardware with only the I²C buses, for the scan.
type i2cOnly struct {
	board.Hardware
	h *periph.Host
}

func (o i2cOnly) I2C(bus int) (i2c.Bus, error) { return o.h.I2C(bus) }

func TestThisPi(t *testing.T) {
	host, err := periph.Open(nil)
	if errors.Is(err, periph.ErrNoGPIOChip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := pi.New(&pi.Options{Hardware: i2cOnly{h: host}})
	if errors.Is(err, pi.ErrNotAPi) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	info := b.Info()
	t.Logf("info %+v, details %+v", info, b.Details())
	if !strings.HasPrefix(info.NodeID, "pi-") || info.Serial == "" || info.MACAddress == "" || info.MemoryMB == 0 {
		t.Errorf("incomplete identity: %+v", info)
	}
	for _, p := range b.Pins() {
		t.Logf("pin %2d GPIO%-2d %-6s %-7s %s", p.Number, p.BCM, p.Direction, p.State, p.UsedBy)
	}
	for _, p := range b.Scan() {
		t.Logf("found %+v", p)
	}
	m := b.SystemMetrics()
	t.Logf("metrics %+v", m)
	if m.CPUTempC < 10 || m.CPUTempC > 100 || m.MemoryUsagePct <= 0 || len(m.Errors) != 0 {
		t.Errorf("implausible metrics: %+v", m)
	}
}
