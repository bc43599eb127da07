// Package sysfspwmtest is a fake /sys/class/pwm in a directory: the chips'
// files laid out as the kernel lays them out (class links into
// sys/devices), and a fake kernel that creates a channel's directory when
// its number is written to export and removes it on unexport, optionally
// late and with its files not yet writable, as udev leaves them for a
// moment on Raspberry Pi OS.
package sysfspwmtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chip is a PWM chip to lay out.
type Chip struct {
	Name   string // "pwmchip0"
	Device string // "soc/fe20c000.pwm", under sys/devices/platform
	NPWM   int
}

// Pi4 is a Raspberry Pi 4's PWM block with the pwm-2chan overlay loaded.
func Pi4() []Chip { return []Chip{{Name: "pwmchip0", Device: "soc/fe20c000.pwm", NPWM: 2}} }

// Pi5 is a Raspberry Pi 5's PWM chips: the RP1's PWM1 (which drives the
// fan) as pwmchip0 and its PWM0, whose channels reach the header, as
// pwmchip2.
func Pi5() []Chip {
	return []Chip{
		{Name: "pwmchip0", Device: "axi/1000120000.pcie/1f0009c000.pwm", NPWM: 4},
		{Name: "pwmchip2", Device: "axi/1000120000.pcie/1f00098000.pwm", NPWM: 4},
	}
}

// Options shapes how the fake kernel answers.
type Options struct {
	// ExportDelay is how long after an export the channel's directory
	// appears.
	ExportDelay time.Duration
	// WritableAfter is how long after the directory appears its files
	// become writable (mode 0444 until then, 0664 after); negative means
	// never.
	WritableAfter time.Duration
	// ExportMode is the mode of export and unexport; 0 means 0660 (a
	// process not in the file's group cannot write it with 0440).
	ExportMode os.FileMode
}

// Kernel is the fake kernel of one tree.
type Kernel struct {
	root  string
	opt   Options
	chips []Chip

	mu      sync.Mutex
	pending map[string]bool
	stop    chan struct{}
	done    chan struct{}
}

// New lays out chips under root (a temporary directory) and starts the
// fake kernel; it stops when the test ends.
func New(t testing.TB, root string, opt Options, chips ...Chip) *Kernel {
	t.Helper()
	if opt.ExportMode == 0 {
		opt.ExportMode = 0o660
	}
	k := &Kernel{root: root, opt: opt, chips: chips, pending: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	class := filepath.Join(root, "sys/class/pwm")
	must(t, os.MkdirAll(class, 0o755))
	for _, c := range chips {
		dir := filepath.Join(root, "sys/devices/platform", c.Device, "pwm", c.Name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "npwm"), []byte(strconv.Itoa(c.NPWM)+"\n"), 0o444))
		for _, f := range []string{"export", "unexport"} {
			p := filepath.Join(dir, f)
			must(t, os.WriteFile(p, nil, 0o600))
			must(t, os.Chmod(p, opt.ExportMode))
		}
		rel, err := filepath.Rel(class, dir)
		must(t, err)
		must(t, os.Symlink(rel, filepath.Join(class, c.Name)))
	}
	go k.run()
	t.Cleanup(func() { close(k.stop); <-k.done })
	return k
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ChannelDir returns the directory of an exported channel.
func (k *Kernel) ChannelDir(chip string, ch int) string {
	return filepath.Join(k.root, "sys/class/pwm", chip, "pwm"+strconv.Itoa(ch))
}

// Exported reports whether a channel's directory exists.
func (k *Kernel) Exported(chip string, ch int) bool {
	_, err := os.Stat(k.ChannelDir(chip, ch))
	return err == nil
}

// Value returns an attribute of an exported channel, trimmed; "" when it
// cannot be read.
func (k *Kernel) Value(chip string, ch int, attr string) string {
	b, err := os.ReadFile(filepath.Join(k.ChannelDir(chip, ch), attr))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Export creates a channel's directory at once, as a channel left exported
// by an earlier process.
func (k *Kernel) Export(t testing.TB, chip string, ch int, period, duty int64, enable bool) {
	t.Helper()
	dir := k.ChannelDir(chip, ch)
	must(t, os.MkdirAll(dir, 0o755))
	en := "0"
	if enable {
		en = "1"
	}
	for attr, v := range map[string]string{"period": strconv.FormatInt(period, 10), "duty_cycle": strconv.FormatInt(duty, 10), "polarity": "inversed", "enable": en} {
		must(t, os.WriteFile(filepath.Join(dir, attr), []byte(v+"\n"), 0o664))
	}
}

// run polls export and unexport as the kernel would answer writes to them.
func (k *Kernel) run() {
	defer close(k.done)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
		for _, c := range k.chips {
			dir := filepath.Join(k.root, "sys/class/pwm", c.Name)
			if n, ok := take(filepath.Join(dir, "export")); ok && n >= 0 && n < c.NPWM {
				k.export(c.Name, n)
			}
			if n, ok := take(filepath.Join(dir, "unexport")); ok {
				_ = os.RemoveAll(k.ChannelDir(c.Name, n))
			}
		}
	}
}

// take reads a number written to an export file and empties the file.
func take(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return 0, false
	}
	_ = os.Truncate(path, 0)
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}

func (k *Kernel) export(chip string, ch int) {
	key := chip + "/" + strconv.Itoa(ch)
	k.mu.Lock()
	if k.pending[key] {
		k.mu.Unlock()
		return
	}
	k.pending[key] = true
	k.mu.Unlock()
	go func() {
		defer func() { k.mu.Lock(); delete(k.pending, key); k.mu.Unlock() }()
		if !k.sleep(k.opt.ExportDelay) {
			return
		}
		dir := k.ChannelDir(chip, ch)
		tmp := dir + ".new"
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return
		}
		attrs := map[string]string{"period": "0", "duty_cycle": "0", "polarity": "normal", "enable": "0"}
		for attr, v := range attrs {
			_ = os.WriteFile(filepath.Join(tmp, attr), []byte(v+"\n"), 0o444)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return
		}
		if k.opt.WritableAfter < 0 || !k.sleep(k.opt.WritableAfter) {
			return
		}
		for attr := range attrs {
			_ = os.Chmod(filepath.Join(dir, attr), 0o664)
		}
	}()
}

func (k *Kernel) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-k.stop:
		return false
	case <-time.After(d):
		return true
	}
}
