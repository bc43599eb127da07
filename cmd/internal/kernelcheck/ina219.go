package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/saint-os/saint/hal/device/ina219"
	"github.com/saint-os/saint/hal/i2c"
)

// chipRegisters reads and writes an I²C chip's 16-bit registers by a path
// of their own (i2c-tools), as the chip holds them: MSB first on the wire.
type chipRegisters interface {
	Set(reg byte, v uint16) error
	Get(reg byte) (uint16, error)
}

// INA219 registers (datasheet SBOS448G, table 2).
const (
	inaConfig      = 0x00
	inaShunt       = 0x01
	inaBus         = 0x02
	inaPower       = 0x03
	inaCurrent     = 0x04
	inaCalibration = 0x05
)

// The measurement the check presets: 12.000 V on the bus, 50.00 mV across
// the 0.1 Ω shunt (0.5 A), with the driver set for 2 A on the 16 V range.
const (
	inaShuntOhms  = 0.1
	inaMaxCurrent = 2.0
	inaBusVolts   = 12.0
	inaShuntVolts = 0.050
)

// inaPresets returns the registers an INA219 holds in that situation once
// calibrated as the datasheet says (section 8.5): the calibration, and the
// current and power registers the chip computes from it.
func inaPresets() (regs map[byte]uint16, cal uint16) {
	currentLSB := inaMaxCurrent / 32768
	cal = uint16(math.Trunc(0.04096/(currentLSB*inaShuntOhms))) &^ 1 // bit 0 reads 0
	shunt := uint16(math.Round(inaShuntVolts / 10e-6))
	bus := uint16(math.Round(inaBusVolts/4e-3)) << 3
	current := uint16(uint32(shunt) * uint32(cal) / 4096)
	power := uint16(uint32(current) * uint32(bus>>3) / 5000)
	return map[byte]uint16{inaShunt: shunt, inaBus: bus | 2 /* CNVR */, inaCurrent: current, inaPower: power}, cal
}

// inaConfigWant is the configuration the driver must write for the 16 V
// range, PGA /8 (±320 mV), 12-bit ADCs, shunt and bus continuous.
const inaConfigWant = 0x199F

// checkINA219 presets the chip's registers through regs, then reads it with
// hal/device/ina219 over bus: the readings must be the preset situation,
// and the configuration and calibration the driver wrote must be in the
// chip, as regs reads them back.
func checkINA219(bus i2c.Bus, regs chipRegisters, addr uint16) (string, error) {
	presets, cal := inaPresets()
	for _, reg := range []byte{inaShunt, inaBus, inaCurrent, inaPower} {
		if err := regs.Set(reg, presets[reg]); err != nil {
			return "", err
		}
	}
	d, err := ina219.New(bus, &ina219.Opts{Addr: addr, ShuntOhms: inaShuntOhms, MaxCurrent: inaMaxCurrent, Bus16V: true})
	if err != nil {
		return "", err
	}
	r, err := d.Sense()
	if err != nil {
		return "", err
	}
	lsb := d.CurrentLSB()
	var bad []string
	if math.Abs(r.BusVoltage-inaBusVolts) > 1e-9 || !r.Ready || r.Overflow {
		bad = append(bad, fmt.Sprintf("bus %.4f V (ready %v, overflow %v), want %.3f V ready", r.BusVoltage, r.Ready, r.Overflow, inaBusVolts))
	}
	if math.Abs(r.ShuntVoltage-inaShuntVolts) > 1e-9 {
		bad = append(bad, fmt.Sprintf("shunt %.6f V, want %.5f", r.ShuntVoltage, inaShuntVolts))
	}
	if want := inaShuntVolts / inaShuntOhms; math.Abs(r.Current-want) > 2*lsb {
		bad = append(bad, fmt.Sprintf("current %.5f A, want %.3f within %.6f", r.Current, want, 2*lsb))
	}
	if want := inaBusVolts * inaShuntVolts / inaShuntOhms; math.Abs(r.Power-want) > 20*lsb*2 {
		bad = append(bad, fmt.Sprintf("power %.4f W, want %.3f", r.Power, want))
	}
	if got, err := regs.Get(inaConfig); err != nil || got != inaConfigWant {
		bad = append(bad, fmt.Sprintf("configuration register %#04x (%v), want %#04x", got, err, inaConfigWant))
	}
	if got, err := regs.Get(inaCalibration); err != nil || got != cal || got != d.Calibration() {
		bad = append(bad, fmt.Sprintf("calibration register %#04x (%v), want %#04x (the driver says %#04x)", got, err, cal, d.Calibration()))
	}
	if bad != nil {
		return "", fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return fmt.Sprintf("%v: %.3f V, %.2f mV shunt, %.4f A, %.3f W; configuration %#04x and calibration %d in the chip",
		d, r.BusVoltage, r.ShuntVoltage*1e3, r.Current, r.Power, inaConfigWant, cal), nil
}

// i2cTools reads and writes registers with i2c-tools' (or busybox's)
// i2cset and i2cget, whose word transfers are SMBus words: low byte first
// on the wire, so the chip's MSB-first registers travel byte-swapped.
type i2cTools struct {
	bus  int
	addr uint16
}

func swap16(v uint16) uint16 { return v>>8 | v<<8 }

func (t i2cTools) run(args ...string) (string, error) {
	tool := args[0]
	out, err := exec.Command(tool, append([]string{"-y", strconv.Itoa(t.bus), fmt.Sprintf("%#x", t.addr)}, args[1:]...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args[1:], " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (t i2cTools) Set(reg byte, v uint16) error {
	_, err := t.run("i2cset", fmt.Sprintf("%#x", reg), fmt.Sprintf("%#04x", swap16(v)), "w")
	return err
}

func (t i2cTools) Get(reg byte) (uint16, error) {
	out, err := t.run("i2cget", fmt.Sprintf("%#x", reg), "w")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(out, 0, 16)
	if err != nil {
		return 0, fmt.Errorf("i2cget: %q: not a word", out)
	}
	return swap16(uint16(v)), nil
}

// findI2CAdapter returns the number of the I²C adapter whose name is name
// ("SMBus stub driver" for i2c-stub).
func findI2CAdapter(name string) (int, error) {
	dirs, _ := filepath.Glob("/sys/class/i2c-adapter/i2c-*")
	var seen []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "name"))
		if err != nil {
			continue
		}
		got := strings.TrimSpace(string(b))
		seen = append(seen, filepath.Base(d)+" "+strconv.Quote(got))
		if got == name {
			return strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "i2c-"))
		}
	}
	return 0, fmt.Errorf("no I²C adapter named %q (adapters: %v); is i2c-stub loaded (modprobe i2c-stub chip_addr=0x40)?", name, seen)
}
