package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/saint-os/saint/bringup"
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/cmd/internal/stack"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/hal/can"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/hal/gpio"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/ws/wsclient"
	"github.com/saint-os/saint/sim/model/balance"
)

// Options configures Run.
type Options struct {
	// OutDir receives report.json and the plots; empty writes nothing.
	OutDir string
	// WorkDir holds the configuration and state of the run; empty means a
	// temporary directory removed afterwards.
	WorkDir string
	// RoleConfig overrides role configuration values on top of the
	// scenario's own overrides (same form: role key → dotted path → value).
	RoleConfig map[string]map[string]any
	// Record is the MCAP file every bus topic of the run is recorded to:
	// empty means OutDir/run.mcap (nothing without OutDir), "off" none.
	Record string
	Log    *slog.Logger
}

// defaultReadyTimeout bounds, in virtual time, the wait for adoption.
const defaultReadyTimeout = 30 * time.Second

// Run runs the scenario on a fresh stack and returns its report. The error
// is for a run that could not happen (bad configuration, a stack that did
// not start); a run whose metrics fail returns a report with Pass false.
func Run(ctx context.Context, sc *Scenario, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	work := o.WorkDir
	if work == "" {
		d, err := os.MkdirTemp("", "saint-scenario-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		work = d
	}
	configDir := filepath.Join(work, "config")
	if err := fixtures.WriteConfig(configDir); err != nil {
		return nil, fmt.Errorf("writing configuration: %w", err)
	}
	for _, ov := range []map[string]map[string]any{sc.RoleConfig, o.RoleConfig} {
		if err := overrideRoleConfigs(filepath.Join(configDir, "roles"), ov); err != nil {
			return nil, err
		}
	}
	if err := validateRoleConfigs(filepath.Join(configDir, "roles")); err != nil {
		return nil, err
	}

	var robot *bringup.Robot
	if sc.RobotType != "" {
		var err error
		if robot, err = bringup.Resolve(os.DirFS(configDir), sc.RobotType); err != nil {
			return nil, err
		}
	}
	st, err := stack.New(stack.Options{
		ConfigDir: configDir, DataDir: filepath.Join(work, "data"), WSAddr: "127.0.0.1:0",
		Seed: sc.Seed, Version: "scenario", Log: o.Log, Robot: robot,
	})
	if err != nil {
		return nil, err
	}
	r := &runner{sc: sc, st: st, ex: st.Exec, ctx: ctx, log: o.Log, series: map[string][]Sample{}}
	wallStart := time.Now()
	if err := r.record(); err != nil {
		return nil, err
	}
	recFile := o.Record
	if recFile == "" && o.OutDir != "" {
		recFile = filepath.Join(o.OutDir, "run.mcap")
	}
	if recFile != "" && recFile != "off" {
		// Lossless: the run waits for the disk rather than leave holes.
		rec, err := record.Start(record.Options{Bus: st.Connect(), Exec: st.Exec, File: recFile, Lossless: true,
			Writer: record.WriterOptions{Metadata: map[string]string{"scenario": sc.Name, "seed": fmt.Sprint(sc.Seed)}}, Log: o.Log})
		if err != nil {
			return nil, err
		}
		// Runs after the stack's shutdown below (defers run last first),
		// so the recording ends with the nodes' safe stop.
		defer func() {
			if err := rec.Stop(); err != nil {
				o.Log.Error("recording the run", "err", err)
			}
		}()
	}
	if err := r.pump(st.Start); err != nil {
		return nil, fmt.Errorf("starting the stack: %w", err)
	}
	defer func() { _ = r.pump(func() error { st.Shutdown(); return nil }) }()
	if err := r.ready(); err != nil {
		return nil, err
	}
	if err := r.dial(); err != nil {
		return nil, err
	}
	defer r.ws.Close()
	r.t0 = r.ex.Now()
	r.applyInitial()
	if err := r.timeline(); err != nil {
		return nil, err
	}

	rep := &Report{
		Scenario: sc.Name, Description: sc.Description, File: sc.File, Seed: sc.Seed,
		DurationS: sc.Duration.D().Seconds(), Events: r.events, Pass: true,
	}
	for _, e := range r.events {
		if e.Error != "" {
			rep.Pass = false
		}
	}
	for _, m := range sc.Metrics {
		res := evaluate(m, r.series, sc.Duration.D())
		rep.Metrics = append(rep.Metrics, res)
		rep.Pass = rep.Pass && res.Pass
	}
	rep.WallS = time.Since(wallStart).Seconds()
	if o.OutDir != "" {
		if err := rep.write(o.OutDir, sc, r.series); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// runner is one run's state. Its methods run on the goroutine that runs
// the executor, between RunUntil calls, so they may touch what lives on
// the executor.
type runner struct {
	sc     *Scenario
	st     *stack.Stack
	ex     *executor.Executor
	ctx    context.Context
	log    *slog.Logger
	ws     *wsclient.Client
	t0     time.Time
	series map[string][]Sample
	events []EventResult
}

// Sample is one recorded value, at seconds since the timeline started.
type Sample struct {
	T float64 `json:"t"`
	V float64 `json:"v"`
}

// record subscribes to every topic a signal reads.
func (r *runner) record() error {
	byTopic := map[string][]Signal{}
	var topics []string
	for _, s := range r.sc.Signals {
		if _, ok := byTopic[s.Topic]; !ok {
			topics = append(topics, s.Topic)
		}
		byTopic[s.Topic] = append(byTopic[s.Topic], s)
	}
	b := r.st.Connect()
	for _, topic := range topics {
		sigs := byTopic[topic]
		// A message that does not decode is counted and logged by the bus.
		_, err := bus.SubscribeJSON(b, topic, bus.QoS{Depth: 1 << 16}, r.ex, func(_ string, v any) {
			if r.t0.IsZero() {
				return
			}
			t := r.ex.Now().Sub(r.t0).Seconds()
			for _, s := range sigs {
				x, ok := 0.0, false
				if s.Equals != "" {
					var text string
					text, ok = textField(v, s.Field)
					if text == s.Equals {
						x = 1
					}
				} else {
					x, ok = field(v, s.Field)
				}
				if !ok {
					continue
				}
				scale := s.Scale
				if scale == 0 {
					scale = 1
				}
				x = x*scale + s.Offset
				if s.Abs {
					x = math.Abs(x)
				}
				r.series[s.Name] = append(r.series[s.Name], Sample{t, x})
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// textField returns the text at a dotted path.
func textField(v any, path string) (string, bool) {
	x, ok := walk(v, path)
	s, isText := x.(string)
	return s, ok && isText
}

// walk follows a dotted path ("pose.position.x", "angles.0") into decoded
// JSON.
func walk(v any, path string) (any, bool) {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// field walks a dotted path ("pose.position.x", "angles.0") into decoded
// JSON and returns the number there; booleans read as 0 and 1.
func field(v any, path string) (float64, bool) {
	v, ok := walk(v, path)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// pump runs f on its own goroutine while the executor serves what f posts,
// without letting virtual time move: f (a server start, a WebSocket round
// trip, a shutdown) takes no robot time, so the run stays deterministic.
func (r *runner) pump(f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	for {
		if err := r.ex.RunFor(r.ctx, 0); err != nil {
			return err
		}
		select {
		case err := <-done:
			// Serve what f posted last.
			return errors.Join(err, r.ex.RunFor(r.ctx, 0))
		case <-time.After(100 * time.Microsecond):
		}
	}
}

// ready adopts the nodes and runs until every adopted node is active.
func (r *runner) ready() error {
	var only []string
	if len(r.sc.Adopt) > 0 {
		only = r.sc.Adopt
	}
	if err := r.st.AdoptAll(only); err != nil {
		return err
	}
	want := map[int]bool{}
	for i, sn := range r.st.Specs {
		if only == nil {
			want[i] = true
		}
		for _, name := range only {
			if name == sn.Key() || name == sn.ID {
				want[i] = true
			}
		}
	}
	timeout := r.sc.ReadyTimeout.D()
	if timeout <= 0 {
		timeout = defaultReadyTimeout
	}
	deadline := r.ex.Now().Add(timeout)
	for {
		var waiting []string
		for i := range r.st.Specs {
			if want[i] && r.st.Nodes[i].State() != msg.StateActive {
				why := r.st.Nodes[i].State()
				if e := r.st.AdoptionError(r.st.Specs[i].ID); e != "" {
					why += ": adoption failed: " + strings.TrimSpace(e)
				}
				waiting = append(waiting, r.st.Specs[i].Key()+" ("+why+")")
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		if !r.ex.Now().Before(deadline) {
			return fmt.Errorf("nodes not active after %v: %s", timeout, strings.Join(waiting, ", "))
		}
		if err := r.ex.RunFor(r.ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// dial opens a WebSocket client on the server's API, as an operator's
// client would.
func (r *runner) dial() error {
	addr := r.st.Server.Addrs()["ws"]
	return r.pump(func() error {
		ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		defer cancel()
		c, err := wsclient.DialOptions(ctx, "ws://"+addr+"/saint", "", wsclient.Options{Name: "scenario"})
		if err != nil {
			return fmt.Errorf("websocket: %w", err)
		}
		r.ws = c
		return nil
	})
}

// applyInitial puts the robot in the scenario's initial state.
func (r *runner) applyInitial() { r.applyState(r.sc.Initial) }

// applyState puts the robot's bodies in a state.
func (r *runner) applyState(st Initial) {
	rb := r.st.Robot
	if b := st.Balance; b != nil {
		rb.Balance.SetPitch(b.PitchDeg*math.Pi/180, b.PitchRateDeg*math.Pi/180)
		if b.X != nil || b.Y != nil || b.HeadingDeg != nil {
			x, y := rb.Balance.WorldPosition()
			yaw, _ := rb.Balance.Yaw()
			if b.X != nil {
				x = *b.X
			}
			if b.Y != nil {
				y = *b.Y
			}
			if b.HeadingDeg != nil {
				yaw = *b.HeadingDeg * math.Pi / 180
			}
			rb.Balance.SetPose(x, y, yaw)
		}
	}
	if p := st.Tracks; p != nil {
		rb.Tracks.SetPose(p.X, p.Y, p.HeadingDeg*math.Pi/180)
	}
	if st.Floor != nil {
		floor := make([]balance.Patch, len(st.Floor))
		for i, pt := range st.Floor {
			floor[i] = balance.Patch{From: pt.From, To: pt.To, Mu: pt.Mu}
		}
		// Checked when the scenario was read.
		_ = rb.Balance.SetFloor(floor)
	}
	if st.Bumps != nil {
		// Checked when the scenario was read.
		_ = rb.Balance.SetBumps(balanceBumps(st.Bumps))
	}
}

// EventResult is what became of one timeline event.
type EventResult struct {
	At    float64 `json:"at"`
	Line  int     `json:"line,omitempty"`
	What  string  `json:"what"`
	Reply any     `json:"reply,omitempty"`
	Error string  `json:"error,omitempty"`
}

// timeline runs the events in time order (file order for equal times),
// then to the end of the scenario.
func (r *runner) timeline() error {
	events := append([]Event(nil), r.sc.Timeline...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	for _, e := range events {
		if err := r.ex.RunUntil(r.ctx, r.t0.Add(e.At.D())); err != nil {
			return err
		}
		res := EventResult{At: e.At.D().Seconds(), Line: e.line}
		res.What, res.Reply, res.Error = r.apply(e)
		if res.Error != "" {
			r.log.Warn("scenario event failed", "at", e.At.D(), "line", e.line, "event", res.What, "err", res.Error)
		}
		r.events = append(r.events, res)
	}
	return r.ex.RunUntil(r.ctx, r.t0.Add(r.sc.Duration.D()))
}

// apply performs one event and describes it.
func (r *runner) apply(e Event) (what string, reply any, errText string) {
	errS := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	switch {
	case e.WS != nil:
		what = fmt.Sprintf("ws %v %v %v", e.WS["type"], e.WS["target"], e.WS["action"])
		resp, err := r.send(e.WS)
		if err != nil {
			return what, nil, err.Error()
		}
		want := e.Expect
		if want == "" {
			want = "ok"
		}
		if resp["status"] != want {
			return what, resp, fmt.Sprintf("status %v, want %s: %v", resp["status"], want, resp["message"])
		}
		return what, resp, ""
	case e.RC != nil:
		what = "rc"
		rc, err := r.st.RC()
		if err != nil {
			return what, nil, err.Error()
		}
		var errs []error
		if e.RC.Power != nil {
			rc.SetPower(*e.RC.Power)
		}
		for _, ch := range sortedKeys(e.RC.Sticks) {
			errs = append(errs, rc.SetNormalized(ch, e.RC.Sticks[ch]))
		}
		for _, ch := range sortedKeys(e.RC.Switches) {
			errs = append(errs, rc.SetSwitch(ch, e.RC.Switches[ch]))
		}
		return what, nil, errS(errors.Join(errs...))
	case e.Push != nil:
		what = "push " + e.Push.Body
		f := e.Push.Force
		return what, nil, errS(r.st.Robot.World().Disturb(msg.SimDisturbRequest{
			Kind: msg.DisturbPush, Target: e.Push.Body, Force: f, DurationS: e.Push.Duration.D().Seconds(),
		}))
	case e.Disturb != nil:
		var req msg.SimDisturbRequest
		if err := remarshal(e.Disturb, &req); err != nil {
			return "disturb", nil, err.Error()
		}
		return "disturb " + req.Kind + " " + req.Target, nil, errS(r.st.Robot.World().Disturb(req))
	case e.Fault != nil:
		f := e.Fault
		switch {
		case f.NodeStop != "":
			return "node_stop " + f.NodeStop, nil, errS(r.st.StopNode(f.NodeStop))
		case f.NodeRestart != "":
			return "node_restart " + f.NodeRestart, nil, errS(r.st.RestartNode(f.NodeRestart))
		case f.NodeCut != "":
			return "node_cut " + f.NodeCut, nil, errS(r.st.CutNode(f.NodeCut, true))
		case f.NodeRejoin != "":
			return "node_rejoin " + f.NodeRejoin, nil, errS(r.st.CutNode(f.NodeRejoin, false))
		case f.ServerCut != nil:
			r.st.CutServer(*f.ServerCut)
			return "server_cut " + strconv.FormatBool(*f.ServerCut), nil, ""
		case f.RCLoss != nil:
			rc, err := r.st.RC()
			if err != nil {
				return "rc_loss", nil, err.Error()
			}
			rc.SetPower(!*f.RCLoss)
			return "rc_loss " + strconv.FormatBool(*f.RCLoss), nil, ""
		}
	case e.GPIO != nil:
		g := e.GPIO
		what = fmt.Sprintf("gpio %s GPIO%d %s", g.Node, g.Pin, g.Level)
		b, err := r.st.Board(g.Node)
		if err != nil {
			return what, nil, err.Error()
		}
		level := gpio.Low
		if g.Level == "high" {
			level = gpio.High
		}
		return what, nil, errS(b.SetInput(g.Pin, level))
	case e.Set != nil:
		r.applyState(*e.Set)
		return "set state", nil, ""
	case e.BalanceIO != nil:
		return "balance_io", nil, errS(r.balanceIO(*e.BalanceIO))
	case e.CAN != nil:
		c := e.CAN
		what = fmt.Sprintf("can %s %s 0x%03x % x", c.Node, c.Bus, c.ID, c.Data)
		b, err := r.st.Board(c.Node)
		if err != nil {
			return what, nil, err.Error()
		}
		cb, err := b.CANBus(c.Bus)
		if err != nil {
			return what, nil, err.Error()
		}
		f := can.Frame{ID: c.ID, Length: uint8(len(c.Data))}
		copy(f.Data[:], c.Data)
		return what, nil, errS(cb.Send(f))
	case e.Call != nil:
		what = "call " + e.Call.Service
		var resp map[string]any
		err := r.pump(func() error {
			ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
			defer cancel()
			return r.st.Server.Bus().Call(ctx, e.Call.Service, e.Call.Request, &resp)
		})
		if err != nil {
			return what, nil, err.Error()
		}
		for k, want := range e.ExpectReply {
			if got := resp[k]; fmt.Sprint(got) != fmt.Sprint(want) {
				return what, resp, fmt.Sprintf("reply %s = %v, want %v", k, got, want)
			}
		}
		return what, resp, ""
	case e.Publish != nil:
		return "publish " + e.Publish.Topic, nil, errS(r.st.Server.Bus().Publish(e.Publish.Topic, e.Publish.Message))
	}
	return "nothing", nil, "empty event"
}

// balanceIO works the balance base's IO board.
func (r *runner) balanceIO(a BalanceIO) error {
	io := r.st.IOBoard()
	if io == nil {
		return errors.New("the balance IO board is not running")
	}
	if a.PowerOff {
		io.Close()
		return nil
	}
	if a.ArmButton != nil {
		io.PressArm(*a.ArmButton)
	}
	if a.KillOpen != nil {
		io.SetKill(*a.KillOpen)
	}
	var errs []error
	for _, ch := range sortedKeys(a.Channels) {
		errs = append(errs, io.SetChannel(ch, a.Channels[ch]))
	}
	if a.CRSFLost != nil {
		io.CRSF().SetLinkLost(*a.CRSFLost)
	}
	if a.ELRSLost != nil {
		io.ELRS().SetLinkLost(*a.ELRSLost)
	}
	return errors.Join(errs...)
}

// send makes one WebSocket request and waits for its response, skipping
// state updates, with virtual time standing still.
func (r *runner) send(req map[string]any) (map[string]any, error) {
	var resp map[string]any
	err := r.pump(func() error {
		ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		defer cancel()
		var err error
		resp, err = r.ws.Do(ctx, req)
		return err
	})
	return resp, err
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func remarshal(in any, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
