package safeoutputs

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/hal/board"
	"github.com/saint-os/saint/hal/device/mitmotor"
	"github.com/saint-os/saint/hal/device/pca9685"
	"github.com/saint-os/saint/hal/device/vesc"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/node"
	"github.com/saint-os/saint/roleconfig"
)

// Chip is an I²C chip: its bus and address.
type Chip struct {
	Bus  int
	Addr uint16
}

// CANDevices are the ids of the controllers of one kind on a CAN interface.
type CANDevices struct {
	Iface string
	IDs   []uint8
}

// Plan is what makes one role configuration's outputs safe.
type Plan struct {
	Role string
	// PCA9685 chips: every channel full off.
	PCA9685 []Chip
	// LowPins are output pins (BCM numbers) driven low: outputs (the
	// H-bridges' enables) and active-high enables.
	LowPins []int
	// HighPins are the active-low enables (a PCA9685's OE), driven high.
	HighPins []int
	// HardwarePWM pins (BCM numbers) are halted.
	HardwarePWM []int
	// VESC controllers get SET_CURRENT 0, each interface's broadcast id
	// too (IDs may be empty: the broadcast alone).
	VESC []CANDevices
	// MIT actuators exit motor mode.
	MIT []CANDevices
}

// Empty reports whether the plan has nothing to do (an unadopted node, a
// role without actuators).
func (p Plan) Empty() bool {
	return len(p.PCA9685) == 0 && len(p.LowPins) == 0 && len(p.HighPins) == 0 && len(p.HardwarePWM) == 0 && len(p.VESC) == 0 && len(p.MIT) == 0
}

// vescIDKeys are the configuration keys that name VESC controller ids (the
// balance role's, in its balance section).
var vescIDKeys = []string{"vesc_left_id", "vesc_right_id"}

// vescIDs are the controller ids named by vescIDKeys at the top level of
// params or in one of its sections, in that order.
func vescIDs(params map[string]any) ([]uint8, error) {
	var ids []uint8
	look := func(section string, m map[string]any) error {
		for _, k := range vescIDKeys {
			v, ok := m[k]
			if !ok {
				continue
			}
			id, err := canID(v)
			if err != nil {
				return fmt.Errorf("safeoutputs: %s%s: %w", section, k, err)
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return nil
	}
	if err := look("", params); err != nil {
		return nil, err
	}
	sections := slices.Sorted(maps.Keys(params))
	for _, name := range sections {
		if m, ok := params[name].(map[string]any); ok {
			if err := look(name+".", m); err != nil {
				return nil, err
			}
		}
	}
	return ids, nil
}

// For returns the plan for a role configuration.
func For(cfg *roleconfig.Config) (Plan, error) {
	p := Plan{Role: cfg.Role}
	for _, d := range cfg.I2CDevices {
		if d.Driver == "pca9685" {
			p.PCA9685 = append(p.PCA9685, Chip{Bus: d.Bus, Addr: uint16(d.Address)})
		}
	}
	// pwm_outputs name their chips too; a configuration lists each in
	// i2c_devices as well, but the outputs are what must stop.
	for _, o := range cfg.PWMOutputs {
		c := Chip{Bus: o.I2CBus(), Addr: uint16(o.PCA9685)}
		if !slices.Contains(p.PCA9685, c) {
			p.PCA9685 = append(p.PCA9685, c)
		}
	}
	slices.SortFunc(p.PCA9685, func(a, b Chip) int { return (a.Bus<<8 | int(a.Addr)) - (b.Bus<<8 | int(b.Addr)) })
	for _, f := range cfg.GPIOMapping {
		switch f.Type {
		case "output":
			p.LowPins = append(p.LowPins, f.Pin)
		case "enable":
			if f.ActiveLow() {
				p.HighPins = append(p.HighPins, f.Pin)
			} else {
				p.LowPins = append(p.LowPins, f.Pin)
			}
		case "pwm":
			p.HardwarePWM = append(p.HardwarePWM, f.Pin)
		}
	}
	slices.Sort(p.LowPins)
	slices.Sort(p.HighPins)
	slices.Sort(p.HardwarePWM)

	ids, err := vescIDs(cfg.Params)
	if err != nil {
		return Plan{}, err
	}
	for _, port := range cfg.CAN {
		if port.Driver == "vesc" {
			p.VESC = append(p.VESC, CANDevices{Iface: port.Name, IDs: ids})
		}
	}
	mit, err := mitActuators(cfg)
	if err != nil {
		return Plan{}, err
	}
	if mit.Iface != "" {
		p.MIT = append(p.MIT, mit)
	}
	return p, nil
}

// mitActuators reads the actuators section (the CAN interface) and the
// joint table's map_index (their ids), as the arms and limb roles do.
func mitActuators(cfg *roleconfig.Config) (CANDevices, error) {
	var act struct {
		Bus string `yaml:"bus"`
	}
	var table struct {
		MapIndex []int `yaml:"map_index"`
	}
	if err := reencode(cfg.Params["actuators"], &act); err != nil {
		return CANDevices{}, fmt.Errorf("safeoutputs: actuators: %w", err)
	}
	if act.Bus == "" {
		return CANDevices{}, nil
	}
	if err := reencode(cfg.Params["motor"], &table); err != nil {
		return CANDevices{}, fmt.Errorf("safeoutputs: motor: %w", err)
	}
	d := CANDevices{Iface: act.Bus}
	for _, id := range table.MapIndex {
		if id < 0 || id > 255 {
			return CANDevices{}, fmt.Errorf("safeoutputs: motor.map_index: actuator id %d: want 0-255", id)
		}
		d.IDs = append(d.IDs, uint8(id))
	}
	if len(d.IDs) == 0 {
		return CANDevices{}, fmt.Errorf("safeoutputs: actuators on %s but motor.map_index lists no actuator ids", act.Bus)
	}
	return d, nil
}

// reencode decodes a section of Params (decoded as generic YAML) into v.
func reencode(section any, v any) error {
	if section == nil {
		return nil
	}
	data, err := yaml.Marshal(section)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, v)
}

func canID(v any) (uint8, error) {
	n, err := strconv.Atoi(strings.TrimSpace(fmt.Sprint(v)))
	if err != nil || n < 0 || n > 254 {
		return 0, fmt.Errorf("%v: want a controller id 0-254", v)
	}
	return uint8(n), nil
}

// Load returns the plan for the role adopted in the node state directory
// dir, and false when the node has no role (nothing to make safe). A
// role_config.yaml that does not match role.yaml's checksum is still used:
// making outputs safe matters more here than which version of the
// configuration named them.
func Load(dir string) (Plan, bool, error) {
	store, err := node.NewStore(dir)
	if err != nil {
		return Plan{}, false, err
	}
	_, data, ok, err := store.LoadRole()
	if err != nil {
		data, err = os.ReadFile(filepath.Join(dir, "role_config.yaml"))
		if err != nil {
			return Plan{}, false, fmt.Errorf("safeoutputs: %w", err)
		}
		ok = true
	}
	if !ok {
		return Plan{}, false, nil
	}
	cfg, err := roleconfig.ParseFile(filepath.Join(dir, "role_config.yaml"), data)
	if err != nil {
		return Plan{}, false, fmt.Errorf("safeoutputs: %w", err)
	}
	p, err := For(cfg)
	return p, err == nil, err
}

// Step is one action Apply took and how it went.
type Step struct {
	What string // "PCA9685 1:0x41 all off", "GPIO5 low", "can0 VESC 68 current 0"
	Err  error
}

// Apply carries out the plan on hw, every step whether or not the ones
// before it failed, and returns each step with its outcome. Err joins the
// failures.
func (p Plan) Apply(hw board.Hardware) []Step {
	var steps []Step
	do := func(what string, err error) { steps = append(steps, Step{What: what, Err: err}) }
	// Enables first: a disabled PCA9685 (OE high) is off whatever its
	// registers say, even when the I²C write below cannot reach it.
	for _, n := range p.HighPins {
		pin, err := hw.GPIO(n)
		if err == nil {
			err = pin.Out(gpio.High)
		}
		do(fmt.Sprintf("GPIO%d high (enable off)", n), err)
	}
	for _, c := range p.PCA9685 {
		what := fmt.Sprintf("PCA9685 %d:0x%02x all off", c.Bus, c.Addr)
		bus, err := hw.I2C(c.Bus)
		if err == nil {
			err = pca9685.SafeOff(bus, c.Addr)
		}
		do(what, err)
	}
	for _, n := range p.LowPins {
		pin, err := hw.GPIO(n)
		if err == nil {
			err = pin.Out(gpio.Low)
		}
		do(fmt.Sprintf("GPIO%d low", n), err)
	}
	for _, n := range p.HardwarePWM {
		pin, err := hw.PWM(n)
		if err == nil {
			err = pin.Halt()
		}
		do(fmt.Sprintf("GPIO%d PWM halted", n), err)
	}
	for _, d := range p.VESC {
		bus, err := hw.CAN(d.Iface)
		for _, id := range append(slices.Clone(d.IDs), vesc.Broadcast) {
			what := fmt.Sprintf("%s VESC %d current 0", d.Iface, id)
			if id == vesc.Broadcast {
				what = fmt.Sprintf("%s VESC broadcast current 0", d.Iface)
			}
			if err != nil {
				do(what, err)
				continue
			}
			do(what, bus.Send(vesc.CommandFrame(vesc.CmdSetCurrent, id, 0)))
		}
	}
	for _, d := range p.MIT {
		bus, err := hw.CAN(d.Iface)
		for _, id := range d.IDs {
			what := fmt.Sprintf("%s MIT actuator %d motor mode off", d.Iface, id)
			if err != nil {
				do(what, err)
				continue
			}
			do(what, bus.Send(mitmotor.SpecialFrame(id, mitmotor.SpecialDisable)))
		}
	}
	return steps
}

// Err joins the errors of the steps that failed, nil when none did.
func Err(steps []Step) error {
	var errs []error
	for _, s := range steps {
		if s.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.What, s.Err))
		}
	}
	return errors.Join(errs...)
}
