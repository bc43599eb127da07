package sysfspwm

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/saint-os/saint/hal/pwm"
)

// DefaultExportTimeout is how long Channel waits for an exported channel's
// files to become writable. udev usually takes tens of milliseconds.
const DefaultExportTimeout = 2 * time.Second

// exportPoll is how often Channel looks for the exported channel's files.
const exportPoll = 5 * time.Millisecond

// Options configures a Host. Nil Options mean the running machine.
type Options struct {
	// Root is the directory sys/class/pwm is under; "" means "/".
	Root string
	// ExportTimeout bounds the wait for an exported channel; 0 means
	// DefaultExportTimeout.
	ExportTimeout time.Duration
}

// SoC PWM blocks, named by the end of their device's name in sysfs.
const (
	// BCM283xDevice ends the device name of the PWM block of a Pi 0–4
	// (fe20c000.pwm on a Pi 4, 3f20c000.pwm on a Pi 3, 2020c000.pwm on a
	// Pi 0/1).
	BCM283xDevice = "20c000.pwm"
	// RP1Device is the device of a Pi 5's RP1 PWM0, whose four channels
	// reach the header.
	RP1Device = "1f00098000.pwm"
)

// ChipInfo is one PWM chip under /sys/class/pwm.
type ChipInfo struct {
	Name   string // "pwmchip0"
	NPWM   int    // channels
	Device string // the device's sysfs name, "fe20c000.pwm"; "" when unknown
}

// Host opens PWM channels of the machine's PWM chips. Methods are safe for
// concurrent use.
type Host struct {
	root    string
	timeout time.Duration
	chips   []ChipInfo

	mu    sync.Mutex
	inUse map[string]int // "pwmchip0/1" → the BCM GPIO using it
}

// Open lists the PWM chips. A machine without any (no overlay loaded) is
// not an error: Host.PWM then says which overlay to load.
func Open(o *Options) (*Host, error) {
	if o == nil {
		o = &Options{}
	}
	h := &Host{root: o.Root, timeout: o.ExportTimeout, inUse: map[string]int{}}
	if h.root == "" {
		h.root = "/"
	}
	if h.timeout <= 0 {
		h.timeout = DefaultExportTimeout
	}
	class := filepath.Join(h.root, "sys/class/pwm")
	entries, err := os.ReadDir(class)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sysfspwm: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "pwmchip") {
			continue
		}
		dir := filepath.Join(class, e.Name())
		n, err := readInt(filepath.Join(dir, "npwm"))
		if err != nil {
			return nil, fmt.Errorf("sysfspwm: %s: %w", e.Name(), err)
		}
		h.chips = append(h.chips, ChipInfo{Name: e.Name(), NPWM: int(n), Device: deviceOf(dir)})
	}
	sort.Slice(h.chips, func(i, j int) bool { return chipNumber(h.chips[i].Name) < chipNumber(h.chips[j].Name) })
	return h, nil
}

// deviceOf returns the name of the device a chip belongs to: the last
// path element ending in ".pwm" of where the chip's directory really is
// (/sys/class/pwm/pwmchipN links into /sys/devices), or of its device link.
func deviceOf(dir string) string {
	for _, p := range []string{dir, filepath.Join(dir, "device")} {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		parts := strings.Split(real, string(filepath.Separator))
		for i := len(parts) - 1; i >= 0; i-- {
			if strings.HasSuffix(parts[i], ".pwm") {
				return parts[i]
			}
		}
	}
	return ""
}

func chipNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "pwmchip"))
	return n
}

// Chips returns the PWM chips found, in number order.
func (h *Host) Chips() []ChipInfo { return append([]ChipInfo(nil), h.chips...) }

// channelOf maps a header GPIO to its channel on a Raspberry Pi PWM block.
func channelOf(device string, bcm int) (int, bool) {
	switch {
	case device == RP1Device:
		ch, ok := map[int]int{12: 0, 13: 1, 18: 2, 19: 3}[bcm]
		return ch, ok
	case strings.HasSuffix(device, BCM283xDevice):
		ch, ok := map[int]int{12: 0, 18: 0, 13: 1, 19: 1}[bcm]
		return ch, ok
	}
	return 0, false
}

// PWM opens the hardware PWM channel behind BCM GPIO bcm of a Raspberry Pi
// header. The pin must be routed to the PWM block by an overlay (see the
// package documentation); a GPIO whose channel another GPIO already uses is
// refused.
func (h *Host) PWM(bcm int) (*Channel, error) {
	for _, c := range h.chips {
		ch, ok := channelOf(c.Device, bcm)
		if !ok || ch >= c.NPWM {
			continue
		}
		key := c.Name + "/" + strconv.Itoa(ch)
		h.mu.Lock()
		other, busy := h.inUse[key]
		if !busy {
			h.inUse[key] = bcm
		}
		h.mu.Unlock()
		if busy && other != bcm {
			return nil, fmt.Errorf("sysfspwm: GPIO%d: its PWM channel (%s channel %d) already drives GPIO%d, and one channel carries one signal: put one of them on another channel or a PCA9685", bcm, c.Name, ch, other)
		}
		p, err := h.channel(c.Name, ch)
		if err != nil {
			h.mu.Lock()
			delete(h.inUse, key)
			h.mu.Unlock()
			return nil, fmt.Errorf("sysfspwm: GPIO%d: %w", bcm, err)
		}
		p.name = "GPIO" + strconv.Itoa(bcm)
		p.release = func() {
			h.mu.Lock()
			delete(h.inUse, key)
			h.mu.Unlock()
		}
		return p, nil
	}
	if len(h.chips) == 0 {
		return nil, fmt.Errorf("sysfspwm: GPIO%d: no PWM chip in /sys/class/pwm: add dtoverlay=pwm-2chan,pin=12,func=4,pin2=13,func2=4 to config.txt (Pi 4 and Pi 5) and reboot", bcm)
	}
	return nil, fmt.Errorf("sysfspwm: GPIO%d has no hardware PWM channel on this machine's PWM chips (%s); hardware PWM is on GPIO12, 13, 18 and 19, other outputs go on a PCA9685", bcm, h.describeChips())
}

func (h *Host) describeChips() string {
	var s []string
	for _, c := range h.chips {
		d := c.Device
		if d == "" {
			d = "unknown device"
		}
		s = append(s, fmt.Sprintf("%s: %s, %d channels", c.Name, d, c.NPWM))
	}
	return strings.Join(s, "; ")
}

// Channel exports channel ch of chip ("pwmchip0") and waits until its
// files can be written. A channel exported already (by an earlier run that
// did not unexport it) is taken over.
func (h *Host) Channel(chip string, ch int) (*Channel, error) {
	c, err := h.channel(chip, ch)
	if err != nil {
		return nil, fmt.Errorf("sysfspwm: %w", err)
	}
	return c, nil
}

func (h *Host) channel(chip string, ch int) (*Channel, error) {
	var info *ChipInfo
	for i := range h.chips {
		if h.chips[i].Name == chip {
			info = &h.chips[i]
		}
	}
	if info == nil {
		return nil, fmt.Errorf("%s: no such PWM chip in /sys/class/pwm", chip)
	}
	if ch < 0 || ch >= info.NPWM {
		return nil, fmt.Errorf("%s: channel %d, want 0–%d", chip, ch, info.NPWM-1)
	}
	chipDir := filepath.Join(h.root, "sys/class/pwm", chip)
	dir := filepath.Join(chipDir, "pwm"+strconv.Itoa(ch))
	c := &Channel{dir: dir, chipDir: chipDir, ch: ch, name: chip + "/pwm" + strconv.Itoa(ch)}
	if _, err := os.Stat(dir); err != nil {
		if err := writeFile(filepath.Join(chipDir, "export"), strconv.Itoa(ch)); err != nil && !errors.Is(err, syscall.EBUSY) {
			return nil, c.explain("export", err)
		}
	}
	if err := c.waitWritable(h.timeout); err != nil {
		return nil, err
	}
	// Start from a known state: off, normal polarity.
	if err := c.write("enable", "0"); err != nil {
		return nil, err
	}
	if pol, err := os.ReadFile(filepath.Join(dir, "polarity")); err == nil && strings.TrimSpace(string(pol)) != "normal" {
		if err := c.write("polarity", "normal"); err != nil {
			return nil, err
		}
	}
	var err error
	if c.period, err = readInt(filepath.Join(dir, "period")); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if c.duty, err = readInt(filepath.Join(dir, "duty_cycle")); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	return c, nil
}

// Channel is one exported PWM channel. It implements pwm.Pin. Methods are
// safe for concurrent use.
type Channel struct {
	dir, chipDir string
	ch           int
	name         string
	release      func()

	mu      sync.Mutex
	period  int64 // ns, as last written or read
	duty    int64 // ns
	enabled bool
	closed  bool
}

func (c *Channel) String() string { return c.name }

// waitWritable polls until the channel's files exist and can be opened
// for writing: the kernel creates them on export, udev then hands them to
// the gpio group.
func (c *Channel) waitWritable(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	files := []string{"period", "duty_cycle", "polarity", "enable"}
	for {
		var last error
		for _, f := range files {
			fd, err := os.OpenFile(filepath.Join(c.dir, f), os.O_WRONLY, 0)
			if err != nil {
				last = err
				break
			}
			_ = fd.Close()
		}
		if last == nil {
			return nil
		}
		if !errors.Is(last, fs.ErrNotExist) && !errors.Is(last, fs.ErrPermission) {
			return c.explain("open", last)
		}
		if time.Now().After(deadline) {
			return c.explain(fmt.Sprintf("waiting %v after export", timeout), last)
		}
		time.Sleep(exportPoll)
	}
}

// explain wraps err with what the user can do about it.
func (c *Channel) explain(op string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: %s: %w (the node's user needs write access to /sys/class/pwm: Raspberry Pi OS's udev rule gives it to group gpio; is the user in it?)", c.name, op, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %s: %w (the kernel did not create the channel's files)", c.name, op, err)
	}
	return fmt.Errorf("%s: %s: %w", c.name, op, err)
}

func (c *Channel) write(file, v string) error {
	if err := writeFile(filepath.Join(c.dir, file), v); err != nil {
		return c.explain("writing "+v+" to "+file, err)
	}
	return nil
}

// PWM implements pwm.Pin: duty 0–1 at freqHz, rounded to whole
// nanoseconds. It enables the channel.
func (c *Channel) PWM(duty, freqHz float64) error {
	if math.IsNaN(duty) || duty < 0 || duty > 1 {
		return fmt.Errorf("sysfspwm: %s: duty %v, want 0–1", c.name, duty)
	}
	if math.IsNaN(freqHz) || math.IsInf(freqHz, 0) || freqHz <= 0 || freqHz > 1e9 {
		return fmt.Errorf("sysfspwm: %s: frequency %v Hz, want 0 < f ≤ 1 GHz", c.name, freqHz)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("sysfspwm: %s: closed", c.name)
	}
	period := int64(math.Round(1e9 / freqHz))
	d := int64(math.Round(duty * float64(period)))
	// The kernel keeps duty_cycle ≤ period at every write.
	if d > c.period {
		if err := c.setPeriod(period); err != nil {
			return err
		}
		if err := c.setDuty(d); err != nil {
			return err
		}
	} else {
		if err := c.setDuty(d); err != nil {
			return err
		}
		if err := c.setPeriod(period); err != nil {
			return err
		}
	}
	if !c.enabled {
		if err := c.write("enable", "1"); err != nil {
			return fmt.Errorf("sysfspwm: %w", err)
		}
		c.enabled = true
	}
	return nil
}

func (c *Channel) setPeriod(ns int64) error {
	if ns == c.period {
		return nil
	}
	if err := c.write("period", strconv.FormatInt(ns, 10)); err != nil {
		return fmt.Errorf("sysfspwm: %w", err)
	}
	c.period = ns
	return nil
}

func (c *Channel) setDuty(ns int64) error {
	if ns == c.duty {
		return nil
	}
	if err := c.write("duty_cycle", strconv.FormatInt(ns, 10)); err != nil {
		return fmt.Errorf("sysfspwm: %w", err)
	}
	c.duty = ns
	return nil
}

// Halt implements pwm.Pin: duty 0, then disabled. With normal polarity the
// output stays low.
func (c *Channel) Halt() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	return c.halt()
}

func (c *Channel) halt() error {
	if err := c.setDuty(0); err != nil {
		return err
	}
	if err := c.write("enable", "0"); err != nil {
		return fmt.Errorf("sysfspwm: %w", err)
	}
	c.enabled = false
	return nil
}

// Close halts and unexports the channel.
func (c *Channel) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	err := c.halt()
	if uerr := writeFile(filepath.Join(c.chipDir, "unexport"), strconv.Itoa(c.ch)); uerr != nil {
		err = errors.Join(err, fmt.Errorf("sysfspwm: %w", c.explain("unexport", uerr)))
	}
	c.closed = true
	if c.release != nil {
		c.release()
	}
	return err
}

// writeFile writes v to an existing sysfs attribute in one write, as sysfs
// wants.
func writeFile(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	return errors.Join(err, f.Close())
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", path, s)
	}
	return n, nil
}

var _ pwm.Pin = (*Channel)(nil)
