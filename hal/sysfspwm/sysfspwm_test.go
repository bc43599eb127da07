package sysfspwm_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/hal/sysfspwm"
	"github.com/saint-os/saint/hal/sysfspwm/sysfspwmtest"
)

func open(t *testing.T, opt sysfspwmtest.Options, timeout time.Duration, chips []sysfspwmtest.Chip) (*sysfspwm.Host, *sysfspwmtest.Kernel) {
	t.Helper()
	root := t.TempDir()
	k := sysfspwmtest.New(t, root, opt, chips...)
	h, err := sysfspwm.Open(&sysfspwm.Options{Root: root, ExportTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return h, k
}

// eventually polls cond, which the fake kernel makes true in its own time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	bustest.WaitUntil(t, 5*time.Second, what, cond)
}

func wantAttrs(t *testing.T, k *sysfspwmtest.Kernel, chip string, ch int, want map[string]string) {
	t.Helper()
	for attr, v := range want {
		if got := k.Value(chip, ch, attr); got != v {
			t.Errorf("%s/pwm%d/%s = %q, want %q", chip, ch, attr, got, v)
		}
	}
}

func TestPi4ServoAndChannels(t *testing.T) {
	h, k := open(t, sysfspwmtest.Options{}, 0, sysfspwmtest.Pi4())
	if got := h.Chips(); len(got) != 1 || got[0].Device != "fe20c000.pwm" || got[0].NPWM != 2 {
		t.Fatalf("Chips() = %+v, want pwmchip0 of fe20c000.pwm with 2 channels", got)
	}
	pan, err := h.PWM(12)
	if err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 0, map[string]string{"enable": "0", "polarity": "normal"})
	// A servo at neutral: 1.5 ms of 20 ms.
	if err := pan.PWM(0.075, 50); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 0, map[string]string{"period": "20000000", "duty_cycle": "1500000", "enable": "1"})
	tilt, err := h.PWM(13)
	if err != nil {
		t.Fatal(err)
	}
	if err := tilt.PWM(0.1, 50); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 1, map[string]string{"period": "20000000", "duty_cycle": "2000000", "enable": "1"})
	wantAttrs(t, k, "pwmchip0", 0, map[string]string{"duty_cycle": "1500000"})

	// GPIO18 is GPIO12's channel on a Pi 4: it cannot carry its own signal.
	if _, err := h.PWM(18); err == nil || !strings.Contains(err.Error(), "already drives GPIO12") {
		t.Errorf("PWM(18) with GPIO12 open: %v, want a shared-channel error", err)
	}
	if _, err := h.PWM(17); err == nil || !strings.Contains(err.Error(), "PCA9685") {
		t.Errorf("PWM(17): %v, want no-channel error", err)
	}

	if err := pan.Halt(); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 0, map[string]string{"duty_cycle": "0", "enable": "0"})
	// Motor PWM after the servo: a shorter period than the old duty
	// cycle would be refused by the kernel, so duty goes first.
	if err := pan.PWM(0.5, 20000); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 0, map[string]string{"period": "50000", "duty_cycle": "25000", "enable": "1"})

	if err := pan.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pwmchip0/pwm0 unexported", func() bool { return !k.Exported("pwmchip0", 0) })
	if err := pan.PWM(0.5, 50); err == nil {
		t.Error("PWM after Close succeeded")
	}
	// Closing GPIO12 frees its channel for GPIO18.
	roll, err := h.PWM(18)
	if err != nil {
		t.Fatalf("PWM(18) after GPIO12 closed: %v", err)
	}
	if roll.String() != "GPIO18" {
		t.Errorf("String() = %q", roll.String())
	}
}

func TestPi5FourChannels(t *testing.T) {
	h, k := open(t, sysfspwmtest.Options{}, 0, sysfspwmtest.Pi5())
	for i, bcm := range []int{12, 13, 18, 19} {
		p, err := h.PWM(bcm)
		if err != nil {
			t.Fatalf("PWM(%d): %v", bcm, err)
		}
		if err := p.PWM(float64(i+1)/10, 1000); err != nil {
			t.Fatal(err)
		}
	}
	// The RP1's PWM0 is pwmchip2 here; the fan's chip is left alone.
	for ch, duty := range []string{"100000", "200000", "300000", "400000"} {
		wantAttrs(t, k, "pwmchip2", ch, map[string]string{"period": "1000000", "duty_cycle": duty, "enable": "1"})
		if k.Exported("pwmchip0", ch) {
			t.Errorf("the fan's chip pwmchip0 channel %d was exported", ch)
		}
	}
}

func TestTakesOverAnExportedChannel(t *testing.T) {
	h, k := open(t, sysfspwmtest.Options{}, 0, sysfspwmtest.Pi4())
	k.Export(t, "pwmchip0", 1, 20_000_000, 1_500_000, true)
	p, err := h.PWM(13)
	if err != nil {
		t.Fatal(err)
	}
	// Off and normal polarity before the first PWM.
	wantAttrs(t, k, "pwmchip0", 1, map[string]string{"enable": "0", "polarity": "normal", "period": "20000000"})
	if err := p.PWM(0.25, 10000); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 1, map[string]string{"period": "100000", "duty_cycle": "25000", "enable": "1"})
}

func TestLateChannelDirectory(t *testing.T) {
	h, k := open(t, sysfspwmtest.Options{ExportDelay: 60 * time.Millisecond}, time.Second, sysfspwmtest.Pi4())
	p, err := h.PWM(12)
	if err != nil {
		t.Fatalf("PWM with the channel appearing 60 ms after export: %v", err)
	}
	if err := p.PWM(1, 50); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, k, "pwmchip0", 0, map[string]string{"duty_cycle": "20000000", "enable": "1"})

	h, _ = open(t, sysfspwmtest.Options{ExportDelay: time.Hour}, 50*time.Millisecond, sysfspwmtest.Pi4())
	_, err = h.PWM(12)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "waiting 50ms after export") {
		t.Errorf("PWM with a channel that never appears: %v, want a not-exist error after the timeout", err)
	}
}

func TestNoPWMChip(t *testing.T) {
	h, _ := open(t, sysfspwmtest.Options{}, 0, nil)
	if _, err := h.PWM(12); err == nil || !strings.Contains(err.Error(), "dtoverlay=pwm-2chan") {
		t.Errorf("PWM on a machine without PWM chips: %v, want the overlay named", err)
	}
	if _, err := h.Channel("pwmchip0", 0); err == nil {
		t.Error("Channel of a missing chip succeeded")
	}
}

func TestBadArguments(t *testing.T) {
	h, _ := open(t, sysfspwmtest.Options{}, 0, sysfspwmtest.Pi4())
	if _, err := h.Channel("pwmchip0", 2); err == nil || !strings.Contains(err.Error(), "want 0–1") {
		t.Errorf("Channel(pwmchip0, 2): %v", err)
	}
	p, err := h.Channel("pwmchip0", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ duty, freq float64 }{{-0.1, 50}, {1.1, 50}, {0.5, 0}, {0.5, -1}} {
		if err := p.PWM(c.duty, c.freq); err == nil {
			t.Errorf("PWM(%v, %v) succeeded", c.duty, c.freq)
		}
	}
}
