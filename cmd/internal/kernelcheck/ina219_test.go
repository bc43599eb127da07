package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// registerChip is a chip of 16-bit registers sent MSB first, with a second
// door onto them (chipRegisters) as i2c-tools gives on a real adapter.
// swapReads makes it answer reads byte-swapped, as a bus carrying SMBus
// words the wrong way round would.
type registerChip struct {
	mu        sync.Mutex
	regs      map[byte]uint16
	swapReads bool
}

func (c *registerChip) Tx(addr uint16, w, r []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if addr != 0x40 {
		return fmt.Errorf("no device at %#x", addr)
	}
	switch {
	case len(w) == 1 && len(r) == 2:
		v := c.regs[w[0]]
		if c.swapReads {
			v = swap16(v)
		}
		r[0], r[1] = byte(v>>8), byte(v)
	case len(w) == 3 && len(r) == 0:
		c.regs[w[0]] = uint16(w[1])<<8 | uint16(w[2])
	default:
		return fmt.Errorf("transaction of %d+%d bytes", len(w), len(r))
	}
	return nil
}

func (c *registerChip) Set(reg byte, v uint16) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.regs[reg] = v
	return nil
}

func (c *registerChip) Get(reg byte) (uint16, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.regs[reg], nil
}

func TestINA219Check(t *testing.T) {
	chip := &registerChip{regs: map[byte]uint16{}}
	detail, err := checkINA219(chip, chip, 0x40)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(detail, "12.000 V") || !strings.Contains(detail, "calibration 6710") {
		t.Errorf("detail %q", detail)
	}
	bad := &registerChip{regs: map[byte]uint16{}, swapReads: true}
	if _, err := checkINA219(bad, bad, 0x40); err == nil || !strings.Contains(err.Error(), "bus") {
		t.Errorf("checkINA219 on a bus swapping bytes = %v, want the readings refused", err)
	}
}

// The presets are the datasheet's example situation: 12 V, 0.5 A through
// 0.1 Ω with a 2 A range: calibration 6710, current 8190 counts.
func TestINA219Presets(t *testing.T) {
	regs, cal := inaPresets()
	if cal != 6710 || regs[inaShunt] != 5000 || regs[inaBus] != 3000<<3|2 || regs[inaCurrent] != 8190 || regs[inaPower] != 4914 {
		t.Errorf("presets %v, calibration %d", regs, cal)
	}
}
