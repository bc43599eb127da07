package console

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/device/ssd1306"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/roles/rolekit"
)

// Console is the console role: the SSD1306 status display and the
// buttons.
//
// The screen shows, in order of precedence: the most urgent alert taken on
// the alerts topic (critical above error above warning above info, the
// newest of a level first) until it expires or the back button dismisses
// it; a text page pushed on the display topic; the status page (robot
// name, e-stop state from the router's status, battery voltage from a
// power topic, how many nodes report status, override state).
//
// Every button gpio_mapping function named button_<control> publishes a
// ConsoleInput press and release, debounced on the edges' timestamps.
// Pressing estop is what the router takes as the console's emergency stop.
// Holding the override button (select) for override.hold_ms toggles the
// manual override: while on, the console publishes ConsoleOverride with
// the configured target and values at override.rate_hz, faster than the
// router's source timeout; turning it off publishes Active false at once.
type Console struct {
	rolekit.Kit
	cfg     consoleConfig
	oled    *ssd1306.Dev
	buttons map[string]*consoleButton

	page     *msg.ConsoleDisplay // pushed text page, nil for status
	alerts   []consoleAlert
	estop    bool
	estopSrc string
	battery  float64 // V, 0 when unknown
	nodes    map[string]time.Time
	override bool
	overTick *executor.Timer
}

type consoleConfig struct {
	robotName      string
	debounce       time.Duration
	refresh        time.Duration
	nodeTimeout    time.Duration
	batteryTopic   string
	overrideButton string
	overrideHold   time.Duration
	overridePeriod time.Duration
	overrideTarget string
	overrideValues map[string]float32
	alertShow      map[string]time.Duration // 0: until dismissed
}

type consoleAlert struct {
	msg.ConsoleAlert
	rank  int
	seq   int
	until time.Time // zero: until dismissed
}

// Alert ranks: a higher rank is shown first.
var consoleAlertRank = map[string]int{msg.AlertInfo: 0, msg.AlertWarning: 1, msg.AlertError: 2, msg.AlertCritical: 3}

// consoleButton is one button, pressed when its pin reads low (wired to
// ground with a pull-up).
type consoleButton struct {
	control  string
	pin      gpio.PinIO
	pressed  bool      // debounced state
	accepted time.Time // stamp of the last accepted change
	settle   *executor.Timer
	hold     *executor.Timer
	stopEdge func()
}

// Start implements rolekit.Role.
func (c *Console) Start(env rolekit.Env) error {
	return c.Begin(env, c.open)
}

func (c *Console) open() error {
	env := c.Env
	c.OnStop(c.shutdown)
	if err := c.configure(); err != nil {
		return err
	}
	c.nodes = map[string]time.Time{}
	c.openDisplay()
	c.buttons = map[string]*consoleButton{}
	for name, pin := range c.Pins.Inputs() {
		control, ok := strings.CutPrefix(name, "button_")
		if !ok {
			continue
		}
		b := &consoleButton{control: control, pin: pin, pressed: pin.Read() == gpio.Low}
		c.buttons[control] = b
		w, ok := pin.(gpio.EdgeWatcher)
		if !ok {
			return fmt.Errorf("console: gpio_mapping.%s: the pin does not report edges", name)
		}
		b.stopEdge = w.WatchEdges(func(e gpio.EdgeEvent) {
			env.Exec.Post(func() { c.edge(b, e) })
		})
	}
	qos := bus.QoS{Depth: 16}
	err := errors.Join(
		rolekit.Subscribe(&c.Kit, env.Prefix+"/display", qos, c.onDisplay),
		rolekit.Subscribe(&c.Kit, env.Prefix+"/alerts", qos, c.onAlert),
		rolekit.SubscribeState(&c.Kit, msg.TopicRouterStatus, qos, c.onRouterStatus),
		rolekit.SubscribeState(&c.Kit, msg.TopicAllNodeStatus, qos, c.onNodeStatus))
	if err == nil && c.cfg.batteryTopic != "" {
		err = rolekit.SubscribeState(&c.Kit, c.cfg.batteryTopic, qos, c.onBattery)
	}
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	c.Every(c.cfg.refresh, c.draw)
	c.draw()
	return nil
}

// consoleParams are the console's settings in console.yaml.
type consoleParams struct {
	RobotName     string  `yaml:"robot_name"`
	StateRateHz   float64 `yaml:"state_rate_hz"` // screen refresh
	DebounceMS    float64 `yaml:"debounce_ms"`
	NodeTimeoutMS float64 `yaml:"node_timeout_ms"`
	// BatteryTopic is the PowerState topic shown as the battery voltage;
	// "" shows none.
	BatteryTopic string `yaml:"battery_topic"`
	// AlertDisplayMS is how long an alert of each level stays on the
	// screen; 0 until dismissed.
	AlertDisplayMS map[string]float64 `yaml:"alert_display_ms"`
	Override       struct {
		Button string             `yaml:"button"`
		HoldMS float64            `yaml:"hold_ms"`
		RateHz float64            `yaml:"rate_hz"`
		Target string             `yaml:"target"`
		Values map[string]float32 `yaml:"values"`
	} `yaml:"override"`
}

func (c *Console) configure() error {
	cf := c.Env.Config
	def := consoleParams{RobotName: "SAINT", StateRateHz: 5, DebounceMS: 30, NodeTimeoutMS: 10000}
	def.Override.Button, def.Override.Target, def.Override.HoldMS, def.Override.RateHz = "select", "tracks", 1000, 10
	p, err := rolekit.Section(cf, "", def)
	if err != nil {
		return err
	}
	for _, v := range []struct {
		field, unit string
		v           float64
	}{{"state_rate_hz", "Hz", p.StateRateHz}, {"override.rate_hz", "Hz", p.Override.RateHz}} {
		if !(v.v > 0) {
			return cf.Errorf(v.field, "%g, want a positive number of %s", v.v, v.unit)
		}
	}
	for _, d := range []struct {
		field          string
		v, least, most float64
	}{{"debounce_ms", p.DebounceMS, 1, 1000}, {"node_timeout_ms", p.NodeTimeoutMS, 100, 600000},
		{"override.hold_ms", p.Override.HoldMS, 50, 10000}} {
		if err := cf.Between(d.field, d.v, d.least, d.most, "ms"); err != nil {
			return err
		}
	}
	if p.BatteryTopic != "" && !isPowerTopic(p.BatteryTopic) {
		// The bus lets the console read a role's power topic, not any
		// topic: it is granted exactly what it shows.
		return cf.Errorf("battery_topic", "%q: want a role's power topic, /saint/<role>/power or /saint/<role>/<instance>/power (e.g. /saint/tracks/power)", p.BatteryTopic)
	}
	for _, level := range slices.Sorted(maps.Keys(p.AlertDisplayMS)) {
		// 0 keeps an alert until it is dismissed.
		if err := cf.Between("alert_display_ms."+level, p.AlertDisplayMS[level], 0, 600000, "ms"); err != nil {
			return err
		}
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	cfg := consoleConfig{robotName: p.RobotName, batteryTopic: p.BatteryTopic,
		debounce: ms(p.DebounceMS), refresh: time.Duration(float64(time.Second) / p.StateRateHz), nodeTimeout: ms(p.NodeTimeoutMS),
		overrideButton: p.Override.Button, overrideTarget: p.Override.Target, overrideValues: p.Override.Values,
		overrideHold: ms(p.Override.HoldMS), overridePeriod: time.Duration(float64(time.Second) / p.Override.RateHz)}
	if cfg.robotName == "" {
		cfg.robotName = "SAINT"
	}
	if cfg.overrideValues == nil {
		cfg.overrideValues = map[string]float32{"linear": 0, "angular": 0}
	}
	cfg.alertShow = map[string]time.Duration{msg.AlertInfo: 3 * time.Second, msg.AlertWarning: 5 * time.Second,
		msg.AlertError: 10 * time.Second, msg.AlertCritical: 0}
	for level := range cfg.alertShow {
		if v, ok := p.AlertDisplayMS[level]; ok {
			cfg.alertShow[level] = ms(v)
		}
	}
	c.cfg = cfg
	return nil
}

// openDisplay starts the SSD1306 of i2c_devices. Without it the console
// keeps its buttons: the emergency stop must not depend on the screen.
func (c *Console) openDisplay() {
	for _, d := range c.Env.Config.I2CDevices {
		if d.Driver != "ssd1306" {
			continue
		}
		bus, err := c.Env.Board.Hardware().I2C(d.Bus)
		if err != nil {
			c.Env.Log.Warn("display bus", "bus", d.Bus, "err", err)
			return
		}
		dev, err := ssd1306.New(bus, &ssd1306.Opts{Addr: uint16(d.Address)})
		if err != nil {
			c.Env.Log.Warn("display not started", "err", err)
			return
		}
		c.oled = dev
		return
	}
}

// edge takes one edge of a button, on the executor. The first edge that
// changes the debounced state is taken at once (an emergency stop must
// not wait); edges within debounce of it are contact bounce, and when the
// window ends the pin is read again in case it settled the other way.
func (c *Console) edge(b *consoleButton, e gpio.EdgeEvent) {
	if b.stopEdge == nil {
		return // stopped
	}
	if !b.accepted.IsZero() && e.Time.Sub(b.accepted) < c.cfg.debounce {
		if b.settle == nil {
			wait := b.accepted.Add(c.cfg.debounce).Sub(c.Env.Exec.Now())
			b.settle = c.Env.Exec.After(wait, func() {
				b.settle = nil
				if pressed := b.pin.Read() == gpio.Low; pressed != b.pressed && b.stopEdge != nil {
					c.accept(b, pressed, c.Env.Exec.Now())
				}
			})
		}
		return
	}
	if pressed := e.Level == gpio.Low; pressed != b.pressed {
		c.accept(b, pressed, e.Time)
	}
}

// accept records a debounced change and publishes it.
func (c *Console) accept(b *consoleButton, pressed bool, at time.Time) {
	b.pressed, b.accepted = pressed, at
	ev, val := msg.EventRelease, float32(0)
	if pressed {
		ev, val = msg.EventPress, 1
	}
	_ = c.Env.Bus.Publish(c.Env.Prefix+"/input", msg.ConsoleInput{Control: b.control, Kind: msg.InputButton,
		Event: ev, Value: val, Timestamp: float64(at.UnixNano()) / 1e9})
	if b.hold != nil {
		b.hold.Stop()
		b.hold = nil
	}
	if !pressed {
		return
	}
	switch b.control {
	case c.cfg.overrideButton:
		b.hold = c.Env.Exec.After(at.Add(c.cfg.overrideHold).Sub(c.Env.Exec.Now()), func() {
			b.hold = nil
			c.setOverride(!c.override)
		})
	case "back":
		c.dismiss()
	}
}

// dismiss takes the alert on screen away, or else the text page.
func (c *Console) dismiss() {
	if c.shownAlert() != nil {
		c.alerts = c.alerts[1:] // shownAlert sorted it first
	} else {
		c.page = nil
	}
	c.draw()
}

// setOverride turns the manual override on or off.
func (c *Console) setOverride(on bool) {
	if on == c.override {
		return
	}
	c.override = on
	if c.overTick != nil {
		c.overTick.Stop()
		c.overTick = nil
	}
	c.Env.Log.Info("console override", "active", on, "target", c.cfg.overrideTarget)
	c.publishOverride()
	if on {
		c.overTick = c.Env.Exec.Every(c.cfg.overridePeriod, c.publishOverride)
	}
	c.draw()
}

func (c *Console) publishOverride() {
	ov := msg.ConsoleOverride{Active: c.override, Target: c.cfg.overrideTarget}
	if c.override {
		ov.Values = make(map[string]float32, len(c.cfg.overrideValues))
		for k, v := range c.cfg.overrideValues {
			ov.Values[k] = v
		}
	}
	_ = c.Env.Bus.Publish(c.Env.Prefix+"/override", ov)
}

func (c *Console) onDisplay(d msg.ConsoleDisplay) {
	if d.Page == "status" || d.Page == "" && d.Title == "" && len(d.Lines) == 0 {
		c.page = nil
	} else if c.page == nil || d.Clear {
		c.page = &d
	} else {
		// Without Clear, unchanged lines stay: the new lines replace the
		// old ones by position.
		if d.Title != "" {
			c.page.Title = d.Title
		}
		for i, l := range d.Lines {
			if i < len(c.page.Lines) {
				c.page.Lines[i] = l
			} else {
				c.page.Lines = append(c.page.Lines, l)
			}
		}
		c.page.Page = d.Page
	}
	c.draw()
}

func (c *Console) onAlert(a msg.ConsoleAlert) {
	rank, ok := consoleAlertRank[a.Level]
	if !ok {
		rank = consoleAlertRank[msg.AlertWarning]
	}
	ca := consoleAlert{ConsoleAlert: a, rank: rank}
	for _, o := range c.alerts {
		ca.seq = max(ca.seq, o.seq+1)
	}
	if d := c.cfg.alertShow[a.Level]; d > 0 {
		ca.until = c.Env.Exec.Now().Add(d)
	}
	c.alerts = append(c.alerts, ca)
	c.draw()
}

func (c *Console) onRouterStatus(s msg.RouteStatus) {
	c.estop, c.estopSrc = s.EStopActive, s.EStopSource
}

func (c *Console) onNodeStatus(s msg.NodeStatus) {
	if s.NodeID != "" {
		c.nodes[s.NodeID] = c.Env.Exec.Now()
	}
}

// onBattery shows the voltage of a power topic (roles/power's PowerState):
// none while the monitor does not answer.
func (c *Console) onBattery(p msg.PowerState) {
	if !p.Present {
		c.battery = 0
		return
	}
	c.battery = float64(p.Voltage)
}

// shownAlert is the alert the screen shows: the highest level, newest
// first, among those not expired.
func (c *Console) shownAlert() *consoleAlert {
	now := c.Env.Exec.Now()
	live := c.alerts[:0]
	for _, a := range c.alerts {
		if a.until.IsZero() || now.Before(a.until) {
			live = append(live, a)
		}
	}
	c.alerts = live
	if len(live) == 0 {
		return nil
	}
	sort.SliceStable(live, func(i, j int) bool {
		if live[i].rank != live[j].rank {
			return live[i].rank > live[j].rank
		}
		return live[i].seq > live[j].seq
	})
	return &live[0]
}

// consoleColumns is how many 6-pixel characters fit a 128-pixel row.
const consoleColumns = ssd1306.Width / ssd1306.Advance

// screen returns the eight text lines to show.
func (c *Console) screen() (lines []string, title bool) {
	if a := c.shownAlert(); a != nil {
		lines = []string{"! " + strings.ToUpper(a.Level)}
		if a.Source != "" {
			lines[0] += " " + a.Source
		}
		return append(lines, wrap(a.Message, consoleColumns)...), true
	}
	if c.page != nil {
		if c.page.Title != "" {
			lines = append(lines, c.page.Title)
		}
		return append(lines, c.page.Lines...), c.page.Title != ""
	}
	estop := []string{"E-STOP: clear"}
	if c.estop {
		estop = []string{"E-STOP: ACTIVE"}
		if c.estopSrc != "" {
			estop = append(estop, "  by "+c.estopSrc)
		}
	}
	batt := "Battery: --"
	if c.battery > 0 {
		batt = fmt.Sprintf("Battery: %.1f V", c.battery)
	}
	now := c.Env.Exec.Now()
	n := 0
	for id, at := range c.nodes {
		if now.Sub(at) <= c.cfg.nodeTimeout {
			n++
		} else {
			delete(c.nodes, id)
		}
	}
	lines = append(append([]string{c.cfg.robotName}, estop...), batt, fmt.Sprintf("Nodes: %d", n))
	if c.override {
		lines = append(lines, "OVERRIDE "+c.cfg.overrideTarget)
	}
	return lines, true
}

// draw renders the screen and sends what changed. A title line is
// underlined.
func (c *Console) draw() {
	if c.oled == nil {
		return
	}
	lines, title := c.screen()
	f := c.oled.Frame()
	f.Clear()
	y := 0
	for i, l := range lines {
		if y+ssd1306.GlyphHeight > f.Height() {
			break
		}
		if r := []rune(l); len(r) > consoleColumns {
			l = string(r[:consoleColumns])
		}
		f.Text(0, y, l)
		y += 8
		if i == 0 && title {
			f.Line(0, y, ssd1306.Width-1, y, true)
			y += 2
		}
	}
	if err := c.oled.Flush(); err != nil {
		c.Env.Log.Warn("display flush", "err", err)
	}
}

// wrap breaks s into lines of at most n characters, at spaces where it
// can.
func wrap(s string, n int) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			for r := []rune(w); len(r) > n; r = []rune(w) {
				if line != "" {
					out, line = append(out, line), ""
				}
				out, w = append(out, string(r[:n])), string(r[n:])
			}
			switch {
			case line == "":
				line = w
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= n:
				line += " " + w
			default:
				out, line = append(out, line), w
			}
		}
		out = append(out, line)
	}
	return out
}

// Stop implements rolekit.Role: the override is handed back, then the
// screen is blanked and the pins released.
func (c *Console) Stop() { c.StopAll() }

// shutdown stops the buttons, hands the override back and blanks the
// screen.
func (c *Console) shutdown() {
	for _, b := range c.buttons {
		if b.stopEdge != nil {
			b.stopEdge()
			b.stopEdge = nil
		}
		for _, t := range []*executor.Timer{b.settle, b.hold} {
			if t != nil {
				t.Stop()
			}
		}
	}
	if c.override {
		c.setOverride(false)
	}
	if c.oled != nil {
		c.oled.Frame().Clear()
		_ = c.oled.Flush()
		c.oled = nil
	}
}

// isPowerTopic reports whether topic is a role's PowerState topic,
// msg.PowerTopic of "/saint/<role>" or "/saint/<role>/<instance>".
func isPowerTopic(topic string) bool {
	rest, ok := strings.CutPrefix(topic, "/saint/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[len(parts)-1] != "power" {
		return false
	}
	for _, p := range parts[:len(parts)-1] {
		if !msg.ValidNodeID(p) { // letters, digits, '-', '_': no wildcard
			return false
		}
	}
	return true
}
