package power

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/ina219"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/rolekit"
)

// Config is the power: section of a motor role's configuration (the
// pi-plus power node): where the INA219 is, how it is wired, how often to
// read it, and the low-voltage levels.
//
//	power:
//	  shunt_ohms: 0.1
//	  max_current: 3.2
//	  rate_hz: 10
//	  warning_voltage: 25.6
//	  cutoff_voltage: 24.4
//	  hysteresis: 0.4
//	  trip_ms: 500
//	  release_ms: 2000
type Config struct {
	// Bus and Address locate the INA219. Address 0 takes the
	// configuration's i2c_devices entry whose driver is ina219.
	Bus     int `yaml:"bus"`
	Address int `yaml:"address"`
	// ShuntOhms is the shunt resistor (0 means 0.1 Ω, the common
	// breakout) and MaxCurrent the largest current to measure, A (0
	// means 3.2 A, 320 mV across 0.1 Ω). Currents beyond it read as
	// overflow.
	ShuntOhms  float64 `yaml:"shunt_ohms"`
	MaxCurrent float64 `yaml:"max_current"`
	// RateHz is how often the supply is read and PowerState published;
	// 0 means 10.
	RateHz float64 `yaml:"rate_hz"`
	// WarningVoltage and CutoffVoltage are the low-voltage levels, V:
	// below the first a warning is raised, below the second the role
	// holds its actuators safe. Both are required, warning above cutoff.
	WarningVoltage float64 `yaml:"warning_voltage"`
	CutoffVoltage  float64 `yaml:"cutoff_voltage"`
	// Hysteresis is how far above a level the voltage must come back
	// before that level clears, V (0 means 0.3 V): a battery sagging under
	// load recovers when the load stops, and must not bounce between
	// cutoff and running.
	Hysteresis float64 `yaml:"hysteresis"`
	// TripMS is how long the voltage must stay below a level before it
	// trips (0 means 500 ms), so that a current spike's sag does not;
	// ReleaseMS how long it must stay above level + hysteresis before it
	// clears (0 means 2000 ms).
	TripMS    int `yaml:"trip_ms"`
	ReleaseMS int `yaml:"release_ms"`
}

// ConfigOf reads and checks the power section of cfg, filling in the
// defaults and the INA219's address from i2c_devices.
func ConfigOf(cfg *roleconfig.Config) (Config, error) {
	pc, err := rolekit.Section(cfg, "power", Config{})
	if err != nil {
		return pc, err
	}
	if pc.Address == 0 {
		for _, d := range cfg.I2CDevices {
			if d.Driver == "ina219" {
				pc.Bus, pc.Address = d.Bus, d.Address
				break
			}
		}
	}
	if pc.Address == 0 {
		return pc, cfg.Errorf("power.address", "no INA219 given and none in i2c_devices (driver: ina219)")
	}
	if pc.ShuntOhms == 0 {
		pc.ShuntOhms = 0.1
	}
	if pc.MaxCurrent == 0 {
		pc.MaxCurrent = 3.2
	}
	if pc.RateHz == 0 {
		pc.RateHz = 10
	}
	if pc.Hysteresis == 0 {
		pc.Hysteresis = 0.3
	}
	if pc.TripMS == 0 {
		pc.TripMS = 500
	}
	if pc.ReleaseMS == 0 {
		pc.ReleaseMS = 2000
	}
	switch {
	case pc.ShuntOhms < 0:
		return pc, cfg.Errorf("power.shunt_ohms", "%g, want > 0", pc.ShuntOhms)
	case pc.MaxCurrent < 0:
		return pc, cfg.Errorf("power.max_current", "%g A, want > 0", pc.MaxCurrent)
	case pc.RateHz < 0 || pc.RateHz > 1000:
		return pc, cfg.Errorf("power.rate_hz", "%g, want 0 < rate ≤ 1000", pc.RateHz)
	case pc.CutoffVoltage <= 0:
		return pc, cfg.Errorf("power.cutoff_voltage", "%g V, want a positive voltage", pc.CutoffVoltage)
	case pc.WarningVoltage <= pc.CutoffVoltage:
		return pc, cfg.Errorf("power.warning_voltage", "%g V, want above cutoff_voltage (%g V)", pc.WarningVoltage, pc.CutoffVoltage)
	case pc.Hysteresis < 0:
		return pc, cfg.Errorf("power.hysteresis", "%g V, want ≥ 0", pc.Hysteresis)
	}
	if err := cfg.Between("power.trip_ms", float64(pc.TripMS), 0, 60000, "ms"); err != nil {
		return pc, err
	}
	if err := cfg.Between("power.release_ms", float64(pc.ReleaseMS), 0, 600000, "ms"); err != nil {
		return pc, err
	}
	return pc, nil
}

// Monitor watches a motor role's supply through its INA219: it
// publishes PowerState on "{prefix}/power" at the configured rate, raises
// an alert on the node's /saint/nodes/{id}/alert (which the server shows
// at the console) when the voltage falls below the warning or cutoff
// level (and when it recovers, or the monitor stops answering), and tells the role through its cutoff callback to hold its
// actuators safe while the voltage is below cutoff.
//
// A level trips when the voltage has stayed below it for trip_ms and
// clears when it has stayed above it plus the hysteresis for release_ms.
// Everything runs on the role's executor.
type Monitor struct {
	env      rolekit.Env
	cfg      Config
	dev      *ina219.Dev
	onCutoff func(cutoff bool)
	onRead   func(msg.PowerState)
	tick     *executor.Timer

	state      msg.PowerState
	hasReading bool
	lost       bool // the monitor stopped answering and that was reported

	belowWarning, belowCutoff held
	aboveWarning, aboveCutoff held
}

// held tracks how long a condition has held without interruption.
type held struct {
	on    bool
	since time.Time
}

// update records the condition at now and returns how long it has held.
func (h *held) update(cond bool, now time.Time) time.Duration {
	if !cond {
		h.on = false
		return 0
	}
	if !h.on {
		h.on, h.since = true, now
	}
	return now.Sub(h.since)
}

// Start configures the INA219 of env's configuration (its power:
// section and i2c_devices), reads it once and then at the configured rate.
// onCutoff, which may be nil, runs on the executor with true when the
// supply falls to cutoff (the role must bring its actuators to their safe
// state at once and keep them there) and false when it has recovered.
// Call Stop when the role stops.
func Start(env rolekit.Env, onCutoff func(cutoff bool)) (*Monitor, error) {
	cfg, err := ConfigOf(env.Config)
	if err != nil {
		return nil, err
	}
	bus, err := env.Board.Hardware().I2C(cfg.Bus)
	if err != nil {
		return nil, fmt.Errorf("power: I²C bus %d: %w", cfg.Bus, err)
	}
	dev, err := ina219.New(bus, &ina219.Opts{Addr: uint16(cfg.Address), ShuntOhms: cfg.ShuntOhms, MaxCurrent: cfg.MaxCurrent})
	if err != nil {
		return nil, fmt.Errorf("power: INA219 at %s: %w", roleconfig.I2CAddress(cfg.Bus, cfg.Address), err)
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	p := &Monitor{env: env, cfg: cfg, dev: dev, onCutoff: onCutoff}
	p.state.Header.FrameID = "base_link"
	p.state.WarningVoltage = float32(cfg.WarningVoltage)
	p.state.CutoffVoltage = float32(cfg.CutoffVoltage)
	p.sample()
	p.tick = env.Exec.Every(time.Duration(float64(time.Second)/cfg.RateHz), p.sample)
	return p, nil
}

// Stop stops reading the supply. It does not call the cutoff callback.
func (p *Monitor) Stop() {
	if p.tick != nil {
		p.tick.Stop()
		p.tick = nil
	}
}

// OnReading makes f run on the executor with every PowerState published
// from now on (a role that publishes the supply current on a topic of its
// own, as the tracks do on motor_current).
func (p *Monitor) OnReading(f func(msg.PowerState)) { p.onRead = f }

// State returns the last published PowerState.
func (p *Monitor) State() msg.PowerState { return p.state }

// Voltage returns the last good supply voltage, and false before the
// first reading.
func (p *Monitor) Voltage() (float64, bool) {
	return float64(p.state.Voltage), p.hasReading
}

// Current returns the last good supply current, A, and false before the
// first reading.
func (p *Monitor) Current() (float64, bool) {
	return float64(p.state.Current), p.hasReading
}

// Cutoff reports whether the supply is at cutoff: actuators must be safe.
func (p *Monitor) Cutoff() bool { return p.state.Cutoff }

// Warning reports whether the supply is low.
func (p *Monitor) Warning() bool { return p.state.Warning }

func (p *Monitor) sample() {
	now := p.env.Exec.Now()
	p.state.Header.Stamp = msg.TimeOf(now)
	r, err := p.dev.Sense()
	if err != nil {
		p.state.Present = false
		if !p.lost {
			p.lost = true
			p.alert(msg.AlertWarning, fmt.Sprintf("%s: power monitor %s not answering: %v",
				p.env.Prefix, roleconfig.I2CAddress(p.cfg.Bus, p.cfg.Address), err))
		}
		p.publish()
		return
	}
	if p.lost {
		p.lost = false
		p.alert(msg.AlertInfo, fmt.Sprintf("%s: power monitor answering again", p.env.Prefix))
	}
	p.hasReading = true
	p.state.Present = true
	p.state.Overflow = r.Overflow
	p.state.Voltage = float32(r.BusVoltage)
	p.state.Current = float32(r.Current)
	p.state.Power = float32(r.Power)
	p.judge(r.BusVoltage, now)
	p.publish()
}

// judge moves the warning and cutoff flags with the voltage v measured at
// now, and tells the role and the console when they change.
func (p *Monitor) judge(v float64, now time.Time) {
	trip := time.Duration(p.cfg.TripMS) * time.Millisecond
	release := time.Duration(p.cfg.ReleaseMS) * time.Millisecond
	lowW := p.belowWarning.update(v < p.cfg.WarningVoltage, now)
	lowC := p.belowCutoff.update(v < p.cfg.CutoffVoltage, now)
	okW := p.aboveWarning.update(v >= p.cfg.WarningVoltage+p.cfg.Hysteresis, now)
	okC := p.aboveCutoff.update(v >= p.cfg.CutoffVoltage+p.cfg.Hysteresis, now)

	switch {
	case !p.state.Cutoff && p.belowCutoff.on && lowC >= trip:
		p.state.Cutoff, p.state.Warning = true, true
		p.alert(msg.AlertCritical, fmt.Sprintf("%s: battery at cutoff: %.2f V (cutoff %.2f V); motors stopped",
			p.env.Prefix, v, p.cfg.CutoffVoltage))
		if p.onCutoff != nil {
			p.onCutoff(true)
		}
		return
	case p.state.Cutoff && p.aboveCutoff.on && okC >= release:
		p.state.Cutoff = false
		p.alert(msg.AlertInfo, fmt.Sprintf("%s: battery recovered from cutoff: %.2f V", p.env.Prefix, v))
		if p.onCutoff != nil {
			p.onCutoff(false)
		}
	}
	switch {
	case !p.state.Warning && p.belowWarning.on && lowW >= trip:
		p.state.Warning = true
		p.alert(msg.AlertWarning, fmt.Sprintf("%s: battery low: %.2f V (warning %.2f V, cutoff %.2f V)",
			p.env.Prefix, v, p.cfg.WarningVoltage, p.cfg.CutoffVoltage))
	case p.state.Warning && !p.state.Cutoff && p.aboveWarning.on && okW >= release:
		p.state.Warning = false
		p.alert(msg.AlertInfo, fmt.Sprintf("%s: battery voltage normal: %.2f V", p.env.Prefix, v))
	}
}

func (p *Monitor) publish() {
	if err := p.env.Bus.Publish(msg.PowerTopic(p.env.Prefix), p.state); err != nil {
		p.env.Log.Warn("power state publish", "err", err)
	}
	if p.onRead != nil {
		p.onRead(p.state)
	}
}

// alert shows text on the console and logs it: warnings and errors also
// reach the server as the node's alerts.
func (p *Monitor) alert(level, text string) {
	switch level {
	case msg.AlertError, msg.AlertCritical:
		p.env.Log.Error(text)
	case msg.AlertWarning:
		p.env.Log.Warn(text)
	default:
		p.env.Log.Info(text)
	}
	a := msg.ConsoleAlert{Level: level, Message: text, Source: p.env.NodeID,
		Timestamp: float64(p.env.Exec.Now().UnixNano()) / 1e9}
	if err := p.env.Bus.Publish(msg.NodeAlertTopic(p.env.NodeID), a); err != nil {
		p.env.Log.Warn("power alert publish", "err", err)
	}
}
