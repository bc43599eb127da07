package rolekit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/board/boardtest"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/hal/i2c"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
	"github.com/saint-os/saint/sim/twin"
	twinpca "github.com/saint-os/saint/sim/twin/pca9685"
)

const kitDoc = `role: head
version: "1"
gpio_mapping:
  pan_servo: {pin: 12, type: pwm, frequency: 50}
  motor_pwm: {pin: 13, type: pwm, frequency: 20000}
  led: {pin: 5, type: output}
  button: {pin: 6, type: input, pull: up}
`

type reading struct {
	Value float64 `json:"value"`
}

// kitEnv is an Env on a fresh board, bus and virtual executor, with
// kitDoc's pins.
func kitEnv(t *testing.T) (rolekit.Env, *boardtest.Board) {
	t.Helper()
	cfg, err := roleconfig.ParseFile("kit.yaml", []byte(kitDoc))
	if err != nil {
		t.Fatal(err)
	}
	brd := boardtest.New(nil)
	return rolekit.Env{Exec: executor.NewVirtual(), Bus: mem.New(), Board: brd, Config: cfg}, brd
}

// A Kit claims the mapped pins safe, delivers typed messages, counts the
// ones that do not decode, and StopAll undoes everything: no more ticks or
// messages, clean-ups newest first, pins released and PWM off.
func TestKitStartsSafeAndStopAllUndoesEverything(t *testing.T) {
	env, brd := kitEnv(t)
	ex, b := env.Exec, env.Bus
	var k rolekit.Kit
	var got []float64
	var ticks int
	var order []string
	ex.Post(func() {
		if err := k.Begin(env, func() error { return nil }); err != nil {
			t.Error(err)
			return
		}
		if err := rolekit.Subscribe(&k, "/t/reading", bus.QoS{Depth: 8}, func(r reading) { got = append(got, r.Value) }); err != nil {
			t.Error(err)
		}
		k.Every(10*time.Millisecond, func() { ticks++ })
		k.OnStop(func() { order = append(order, "first") })
		k.OnStop(func() { order = append(order, "second") })
	})
	run := func(d time.Duration) {
		t.Helper()
		if err := ex.RunFor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	run(time.Millisecond)
	if freq, duty, on := brd.PWMState(12); !on || freq != 50 || duty/freq != 1500e-6 {
		t.Errorf("servo pin: %v Hz, duty %v, on %v; want the 1500 µs neutral at 50 Hz", freq, duty, on)
	}
	if _, duty, _ := brd.PWMState(13); duty != 0 {
		t.Errorf("motor pin duty %v, want 0", duty)
	}
	for _, v := range []any{reading{1}, "not a reading", reading{2}} {
		if err := b.Publish("/t/reading", v); err != nil {
			t.Fatal(err)
		}
	}
	run(100 * time.Millisecond)
	if len(got) != 2 || got[0] != 1 || got[1] != 2 || k.DecodeErrors() != 1 {
		t.Errorf("handled %v with %d decode errors, want [1 2] and 1", got, k.DecodeErrors())
	}
	if ticks < 9 {
		t.Errorf("%d ticks in 100 ms of a 10 ms timer", ticks)
	}
	ex.Post(k.StopAll)
	run(time.Millisecond)
	ticksAtStop := ticks
	if err := b.Publish("/t/reading", reading{3}); err != nil {
		t.Fatal(err)
	}
	run(100 * time.Millisecond)
	if ticks != ticksAtStop || len(got) != 2 {
		t.Errorf("after StopAll: %d more ticks, messages %v", ticks-ticksAtStop, got)
	}
	if strings.Join(order, ",") != "second,first" {
		t.Errorf("clean-ups ran %v, want newest first", order)
	}
	for _, p := range brd.Pins() {
		if p.InUse {
			t.Errorf("GPIO%d still used by %s after StopAll", p.BCM, p.UsedBy)
		}
	}
	if _, _, on := brd.PWMState(12); on {
		t.Error("servo still pulsing after StopAll")
	}
	k.StopAll() // a second StopAll does nothing
}

// A pin the board cannot give fails Begin with the function named, and
// nothing stays claimed.
func TestKitBeginReleasesOnError(t *testing.T) {
	env, brd := kitEnv(t)
	if err := brd.Claim(6, board.DirInput, "someone"); err != nil {
		t.Fatal(err)
	}
	var k rolekit.Kit
	err := k.Begin(env, func() error { return nil })
	if err == nil || !strings.Contains(err.Error(), "gpio_mapping.button (GPIO6)") {
		t.Fatalf("error %v, want gpio_mapping.button named", err)
	}
	for _, p := range brd.Pins() {
		if p.InUse && p.BCM != 6 {
			t.Errorf("GPIO%d left claimed by %s", p.BCM, p.UsedBy)
		}
	}
}

type sectionGains struct {
	Kp float64 `yaml:"kp"`
	Ki float64 `yaml:"ki"`
}

func TestSectionDecodesOverDefaults(t *testing.T) {
	cfg, err := roleconfig.ParseFile("s.yaml", []byte("role: tracks\nversion: \"1\"\nloop:\n  kp: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := rolekit.Section(cfg, "loop", sectionGains{Kp: 1, Ki: 3})
	if err != nil || g != (sectionGains{Kp: 2, Ki: 3}) {
		t.Errorf("Section = %+v, %v", g, err)
	}
	cfg.Params["loop"].(map[string]any)["kd"] = 1
	if _, err := rolekit.Section(cfg, "loop", sectionGains{}); err == nil || !strings.Contains(err.Error(), "s.yaml:3: loop.kd: unknown field") {
		t.Errorf("error %v, want the unknown loop.kd at line 3", err)
	}
}

// When the role's open fails, Begin releases the pins and closes what open
// had started.
func TestKitBeginUndoesAFailedOpen(t *testing.T) {
	env, brd := kitEnv(t)
	ex, b := env.Exec, env.Bus
	var err error
	var k rolekit.Kit
	var got []reading
	cleaned := false
	ex.Post(func() {
		err = k.Begin(env, func() error {
			if err := rolekit.Subscribe(&k, "/t/reading", bus.QoS{Depth: 8}, func(r reading) { got = append(got, r) }); err != nil {
				return err
			}
			k.OnStop(func() { cleaned = true })
			return errors.New("no device")
		})
	})
	if err := ex.RunFor(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err == nil || err.Error() != "no device" || !cleaned {
		t.Fatalf("Begin = %v, clean-up ran %v; want open's error and the clean-up run", err, cleaned)
	}
	if err := b.Publish("/t/reading", reading{1}); err != nil {
		t.Fatal(err)
	}
	if err := ex.RunFor(context.Background(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("a role that did not start still got %v", got)
	}
	for _, p := range brd.Pins() {
		if p.InUse {
			t.Errorf("GPIO%d left claimed by %s", p.BCM, p.UsedBy)
		}
	}
}

// An enable (a PCA9685's OE, active low) is driven active once the role's
// pins and chips are open and inactive when the role stops, before the
// pin is given back to the resistor that holds it inactive.
func TestKitEnableIsActiveWhileTheRoleRuns(t *testing.T) {
	const doc = `role: head
version: "1"
gpio_mapping:
  pwm_oe: {pin: 16, type: enable, active: low}
  bridge_enable: {pin: 20, type: enable}
pwm_outputs:
  roll_servo: {pca9685: 0x40, channel: 0, frequency: 50}
i2c_devices:
  - {bus: 1, address: 0x40, driver: pca9685, purpose: servos}
`
	cfg, err := roleconfig.ParseFile("enable.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	bus := &twin.I2CBus{Name: "i2c-1"}
	chip := twinpca.New()
	bus.Attach(0x40, chip)
	brd := boardtest.New(&boardtest.Options{I2C: map[int]i2c.Bus{1: bus}})
	env := rolekit.Env{Exec: executor.NewVirtual(), Bus: mem.New(), Board: brd, Config: cfg}
	var k rolekit.Kit
	if err := k.Begin(env, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if l, _ := brd.Level(16); l != gpio.Low {
		t.Errorf("OE (active low) is %v while the role runs, want low", l)
	}
	if l, _ := brd.Level(20); l != gpio.High {
		t.Errorf("an active-high enable is %v while the role runs, want high", l)
	}
	if f := chip.Frequency(); f < 49 || f > 51 {
		t.Errorf("the PCA9685 runs at %v Hz: not configured before its OE went active", f)
	}
	k.StopAll()
	for pin, inactive := range map[int]gpio.Level{16: gpio.High, 20: gpio.Low} {
		outs, err := brd.Outs(pin)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 2 || outs[0].Level != !inactive || outs[1].Level != inactive {
			t.Errorf("GPIO%d drove %v, want active then %v", pin, outs, inactive)
		}
	}
	for _, bad := range []string{
		"  led: {pin: 5, type: output, active: low}\n",
		"  oe: {pin: 5, type: enable, active: sideways}\n",
	} {
		if _, err := roleconfig.ParseFile("bad.yaml", []byte("role: head\nversion: \"1\"\ngpio_mapping:\n"+bad)); err == nil || !strings.Contains(err.Error(), "active") {
			t.Errorf("%q: %v, want the active field refused", bad, err)
		}
	}
}
