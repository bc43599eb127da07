package safeoutputs

import (
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/hal/device/pca9685"
	"github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/roleconfig"
	simboard "github.com/saint-os/saint/sim/board"
)

// shipped parses a configuration from fixtures/config.
func shipped(t *testing.T, path string) (*roleconfig.Config, []byte) {
	t.Helper()
	data, err := fs.ReadFile(fixtures.Config(), path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := roleconfig.ParseFile(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, data
}

func plan(t *testing.T, path string) Plan {
	t.Helper()
	cfg, _ := shipped(t, path)
	p, err := For(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simBoard(t *testing.T, prof simboard.Profile) *simboard.Board {
	t.Helper()
	b, err := simboard.New(&simboard.Options{Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustApply(t *testing.T, p Plan, b *simboard.Board) []Step {
	t.Helper()
	steps := p.Apply(b.Hardware())
	if err := Err(steps); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return steps
}

// The tracks node left its bridges driving (PWM on the PCA9685, enables
// high): afterwards every PCA9685 channel is off and both enables are low.
func TestTracksBridgesOff(t *testing.T) {
	b := simBoard(t, simboard.Tracks)
	hw := b.Hardware()
	bus, err := hw.I2C(1)
	if err != nil {
		t.Fatal(err)
	}
	chip, err := pca9685.New(bus, &pca9685.Opts{Addr: simboard.TracksPCA9685, FreqHz: 1526})
	if err != nil {
		t.Fatal(err)
	}
	for ch := 0; ch < 4; ch++ {
		if err := chip.SetDuty(ch, 0.6); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{5, 6} {
		pin, err := hw.GPIO(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := pin.Out(gpio.High); err != nil {
			t.Fatal(err)
		}
	}
	twin := b.PCA9685()
	if _, _, on := twin.PWMState(0); !on {
		t.Fatal("the twin's channel 0 is not driving before the test")
	}

	p := plan(t, "roles/tracks.yaml")
	if !slices.Equal(p.LowPins, []int{5, 6}) || len(p.PCA9685) != 1 || p.PCA9685[0] != (Chip{1, 0x41}) {
		t.Fatalf("plan %+v: want the enables GPIO5/6 and the PCA9685 1:0x41", p)
	}
	// Twice: the step is idempotent (the node's orderly stop has often
	// done the same already).
	for i := 0; i < 2; i++ {
		mustApply(t, p, b)
		for ch := 0; ch < pca9685.Channels; ch++ {
			if _, duty, on := twin.PWMState(ch); on || duty != 0 {
				t.Errorf("run %d: PCA9685 channel %d still at duty %v", i, ch, duty)
			}
		}
		for _, n := range []int{5, 6} {
			if l, err := b.Level(n); err != nil || l != gpio.Low {
				t.Errorf("run %d: enable GPIO%d is %v (%v), want low", i, n, l, err)
			}
		}
	}
}

// The balance base's VESCs get SET_CURRENT 0, each by its id and all by the
// broadcast id.
func TestBalanceVESCsStop(t *testing.T) {
	b := simBoard(t, simboard.Balance)
	p := plan(t, "roles/balance.yaml")
	mustApply(t, p, b)
	bus, err := b.CANBus("can0")
	if err != nil {
		t.Fatal(err)
	}
	want := []can.Frame{
		vesc.CommandFrame(vesc.CmdSetCurrent, 68, 0),
		vesc.CommandFrame(vesc.CmdSetCurrent, 56, 0),
		vesc.CommandFrame(vesc.CmdSetCurrent, vesc.Broadcast, 0),
	}
	got := bus.Sent()
	if !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	for _, f := range got {
		cmd, _ := vesc.SplitID(f.ID)
		if !f.Extended || cmd != vesc.CmdSetCurrent || f.Length != 4 || f.Data != [8]byte{} {
			t.Errorf("frame %+v is not SET_CURRENT 0", f)
		}
	}
}

// A limb's MIT-mode actuators leave motor mode: no torque.
func TestMITActuatorsLeaveMotorMode(t *testing.T) {
	b := simBoard(t, simboard.LimbCAN)
	p := plan(t, "humanoid/limb_arm_left.yaml")
	mustApply(t, p, b)
	bus, err := b.CANBus("can0")
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint8
	for _, f := range bus.Sent() {
		code, ok := mitmotor.Special(f)
		if !ok || code != mitmotor.SpecialDisable {
			t.Errorf("frame %+v is not exit-motor-mode", f)
		}
		ids = append(ids, uint8(f.ID))
	}
	if !slices.Equal(ids, []uint8{1, 2, 3, 4}) {
		t.Errorf("exit-motor-mode to %v, want actuators 1-4", ids)
	}
}

// The head's hardware PWM servos stop pulsing and its PCA9685 turns off.
func TestHeadPWMHalted(t *testing.T) {
	b := simBoard(t, simboard.Head)
	hw := b.Hardware()
	for _, n := range []int{12, 13} {
		pin, err := hw.PWM(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := pin.PWM(0.075, 50); err != nil {
			t.Fatal(err)
		}
	}
	p := plan(t, "roles/head.yaml")
	if !slices.Equal(p.HardwarePWM, []int{12, 13}) {
		t.Fatalf("plan %+v: want the hardware PWM pins 12 and 13", p)
	}
	mustApply(t, p, b)
	for _, n := range []int{12, 13} {
		if _, duty, on := b.PWMState(n); on {
			t.Errorf("GPIO%d still pulses at duty %v", n, duty)
		}
	}
}

// A step that fails (no chip answers) does not keep the others from
// running, and the failure names the step.
func TestApplyContinuesPastFailures(t *testing.T) {
	b := simBoard(t, simboard.Bare)
	p := Plan{PCA9685: []Chip{{1, 0x41}}, LowPins: []int{5}, VESC: []CANDevices{{Iface: "can0"}}}
	steps := p.Apply(b.Hardware())
	if len(steps) != 3 {
		t.Fatalf("steps %+v, want 3", steps)
	}
	if steps[0].Err == nil || steps[2].Err == nil {
		t.Errorf("a missing PCA9685 and CAN interface did not fail: %+v", steps)
	}
	if steps[1].Err != nil {
		t.Errorf("GPIO5 low failed: %v", steps[1].Err)
	}
	if l, _ := b.Level(5); l != gpio.Low {
		t.Error("GPIO5 was not driven low after the PCA9685 failed")
	}
	if err := Err(steps); err == nil || !errors.Is(err, steps[0].Err) {
		t.Errorf("Err = %v", err)
	}
}

// Load reads the adopted role from the node's state directory; a node
// without one has nothing to make safe.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := Load(dir); ok || err != nil {
		t.Fatalf("unadopted: %v %v, want nothing to do", ok, err)
	}
	store, err := node.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, data := shipped(t, "roles/tracks.yaml")
	if err := store.SaveRole(node.RoleRecord{AssignedRole: "tracks", ConfigChecksum: roleconfig.Checksum(data)}, data); err != nil {
		t.Fatal(err)
	}
	p, ok, err := Load(dir)
	if err != nil || !ok || p.Role != "tracks" || !slices.Equal(p.LowPins, []int{5, 6}) {
		t.Fatalf("Load: %+v %v %v", p, ok, err)
	}
	// A configuration that no longer matches role.yaml's checksum is still
	// the best description of the wiring.
	if err := store.SaveRole(node.RoleRecord{AssignedRole: "tracks", ConfigChecksum: "0123456789abcdef"}, data); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := Load(dir); err != nil || !ok || len(p.PCA9685) != 1 {
		t.Fatalf("Load with a stale checksum: %+v %v %v", p, ok, err)
	}
}

// Every shipped configuration gives a plan; the ones with actuators a
// plan that does something.
func TestShippedConfigurations(t *testing.T) {
	err := fs.WalkDir(fixtures.Config(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !(slices.Contains([]string{"roles", "humanoid"}, firstDir(path))) {
			return nil
		}
		cfg, _ := shipped(t, path)
		p, err := For(cfg)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if cfg.Role != "console" && p.Empty() {
			t.Errorf("%s (%s): an empty plan", path, cfg.Role)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func firstDir(path string) string {
	for i := range path {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return ""
}

// Enables go inactive: an active-low one (a PCA9685's OE) high, before
// anything else, an active-high one low.
func TestEnablesGoInactive(t *testing.T) {
	cfg, err := roleconfig.ParseFile("oe.yaml", []byte(`role: head
version: "1"
gpio_mapping:
  pwm_oe: {pin: 16, type: enable, active: low}
  relay: {pin: 20, type: enable}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := For(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.HighPins, []int{16}) || !slices.Equal(p.LowPins, []int{20}) {
		t.Fatalf("plan %+v: want GPIO16 high and GPIO20 low", p)
	}
	b := simBoard(t, simboard.Head)
	steps := mustApply(t, p, b)
	if steps[0].What != "GPIO16 high (enable off)" {
		t.Errorf("first step %q, want the OE disabled first", steps[0].What)
	}
	if l, _ := b.Level(16); l != gpio.High {
		t.Error("OE not driven high")
	}
	if l, _ := b.Level(20); l != gpio.Low {
		t.Error("the active-high enable not driven low")
	}
}
