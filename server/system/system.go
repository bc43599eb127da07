package system

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/board/linuxhost"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/adoption"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// Topic is the WebSocket topic that carries SystemStatus, every
// StatusInterval.
const Topic = "system"

// StatusInterval is how often the "system" topic is updated.
const StatusInterval = time.Second

// Power is the hook the system shutdown and reboot commands go through, so
// that tests and the simulator power nothing off.
type Power interface {
	Shutdown(reason string) error
	Reboot(reason string) error
}

// Options are what the system status reports and the commands act on.
type Options struct {
	// Version is the server's software version.
	Version string
	// Power performs shutdown and reboot; nil refuses them.
	Power Power
	// Host samples the server machine; nil means this machine's.
	Host     Host
	Settings *settings.Store
	Adoption *adoption.Manager
	// EStopActive reports whether the emergency stop is latched
	// (executor).
	EStopActive func() bool
	// EStop engages the emergency stop for source, ClearEStop releases it
	// (executor); nil refuses the bus commands estop and clear_estop.
	EStop      func(source, reason string)
	ClearEStop func(source string)
	// Inputs are the input sources' lines of the INPUTS box after the
	// WebSocket's (executor).
	Inputs []func(now time.Time) msg.InputStatus
	// BusCAFingerprint is the bus's TLS CA (SHA-256, hex), "" without TLS.
	BusCAFingerprint string
}

// System is the "system" target: status, shutdown and reboot, the
// "system" topic and the bus service msg.ServiceSystemStatus.
type System struct {
	h       *feature.Host
	o       Options
	started time.Time
	// host is the latest sample of the machine's health (executor).
	host hostSample
}

// Register installs the system commands, topic and service on h.
func Register(h *feature.Host, o Options) *System {
	if o.Host == nil {
		o.Host = localHost{linuxhost.NewSampler(nil, nil)}
	}
	if o.EStopActive == nil {
		o.EStopActive = func() bool { return false }
	}
	s := &System{h: h, o: o}
	g := h.Gateway
	g.HandleCommand("system", "status", s.cmdStatus)
	g.HandleCommand("system", "shutdown", s.cmdShutdown)
	g.HandleCommand("system", "reboot", s.cmdReboot)
	h.Topics(Topic)
	var timer *executor.Timer
	h.Add(feature.Funcs{
		OnStart: func() error {
			s.started = h.Exec.Now()
			timer = h.Exec.Every(StatusInterval, func() { g.Publish(Topic, s.Status()) })
			return nil
		},
		OnStop: func() {
			if timer != nil {
				timer.Stop()
				timer = nil
			}
		},
	})
	h.Add(&hostMonitor{ex: h.Exec, host: o.Host, latest: &s.host})
	feature.Serve(h, msg.ServiceSystemStatus, func(_ msg.SystemStatusRequest, reply func(msg.SystemStatus, error)) {
		reply(s.Status(), nil)
	})
	feature.Serve(h, msg.ServiceSystemShutdown, func(req msg.SystemCommandRequest, reply func(msg.SystemCommandResponse, error)) {
		if req.Command != "" && req.Command != msg.CommandShutdown {
			reply(msg.SystemCommandResponse{Message: fmt.Sprintf("command: %q, this service only shuts down (use %s)", req.Command, msg.ServiceSystemCommand)}, nil)
			return
		}
		req.Command = msg.CommandShutdown
		s.busCommand(req, reply)
	})
	feature.Serve(h, msg.ServiceSystemCommand, s.busCommand)
	return s
}

// busCommand serves msg.ServiceSystemCommand on the executor: the commands
// of the dashboard's quick actions for programs on the bus (an autonomy
// stack, a ROS bridge). DelaySeconds postpones the command; the answer
// then says it is scheduled.
func (s *System) busCommand(req msg.SystemCommandRequest, reply func(msg.SystemCommandResponse, error)) {
	fail := func(format string, args ...any) {
		reply(msg.SystemCommandResponse{Message: fmt.Sprintf(format, args...)}, nil)
	}
	if req.DelaySeconds < 0 || req.DelaySeconds > 3600 {
		fail("delay_seconds: %v, want 0–3600", req.DelaySeconds)
		return
	}
	var run func() (string, error)
	switch req.Command {
	case msg.CommandShutdown, msg.CommandReboot:
		if req.Command == msg.CommandReboot && req.NodeID != "" {
			if !msg.ValidNodeID(req.NodeID) {
				fail("node_id: %q is not a node id", req.NodeID)
				return
			}
			if req.DelaySeconds == 0 {
				s.rebootNode(req.NodeID, reply)
				return
			}
			run = func() (string, error) {
				s.rebootNode(req.NodeID, func(msg.SystemCommandResponse, error) {})
				return "", nil
			}
			break
		}
		if s.o.Power == nil {
			fail("%s is not available on this server (no power control)", req.Command)
			return
		}
		run = func() (string, error) {
			s.h.Log.Warn("system "+req.Command+" requested on the bus", "source", "system", "reason", req.Reason)
			if req.Command == msg.CommandShutdown {
				return "shutting down", s.o.Power.Shutdown(req.Reason)
			}
			return "rebooting", s.o.Power.Reboot(req.Reason)
		}
	case msg.CommandEStop, msg.CommandClearEStop:
		if s.o.EStop == nil || s.o.ClearEStop == nil {
			fail("%s is not available on this server (no router)", req.Command)
			return
		}
		run = func() (string, error) {
			if req.Command == msg.CommandEStop {
				reason := req.Reason
				if reason == "" {
					reason = "system command"
				}
				s.o.EStop(msg.SourceSafety, reason)
				return "emergency stop engaged", nil
			}
			s.o.ClearEStop(msg.SourceSafety)
			if s.o.EStopActive() {
				return "", errors.New("the emergency stop is still engaged by another source")
			}
			return "emergency stop released", nil
		}
	case msg.CommandRestart:
		fail("restart: the server software restarts under its service manager (systemctl restart saint-server), not on request")
		return
	default:
		fail("command: %q, want one of %s, %s, %s, %s, %s", req.Command,
			msg.CommandShutdown, msg.CommandReboot, msg.CommandRestart, msg.CommandEStop, msg.CommandClearEStop)
		return
	}
	if req.DelaySeconds > 0 {
		delay := time.Duration(float64(req.DelaySeconds) * float64(time.Second))
		s.h.Exec.After(delay, func() {
			if _, err := run(); err != nil {
				s.h.Log.Error("system "+req.Command+" failed", "source", "system", "err", err)
			}
		})
		reply(msg.SystemCommandResponse{Success: true, Message: fmt.Sprintf("%s in %v", req.Command, delay)}, nil)
		return
	}
	out, err := run()
	if err != nil {
		fail("%s: %v", req.Command, err)
		return
	}
	reply(msg.SystemCommandResponse{Success: true, Message: out}, nil)
}

// rebootNode asks node id to reboot its software, off the executor, and
// replies with its answer.
func (s *System) rebootNode(id string, reply func(msg.SystemCommandResponse, error)) {
	go func() {
		var resp msg.NodeUpdateResponse
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := s.h.Bus.Call(ctx, msg.NodeUpdateService(id), msg.NodeUpdateRequest{NodeID: id}, &resp); err != nil {
			if errors.Is(err, bus.ErrNoResponders) {
				reply(msg.SystemCommandResponse{Message: "node " + id + " is not online"}, nil)
				return
			}
			reply(msg.SystemCommandResponse{Message: "reboot " + id + ": " + err.Error()}, nil)
			return
		}
		if !resp.Success {
			reply(msg.SystemCommandResponse{Message: "reboot refused by " + id + ": " + resp.Message}, nil)
			return
		}
		s.h.Log.Info("node reboot requested on the bus", "source", "system", "node", id)
		reply(msg.SystemCommandResponse{Success: true, Message: resp.Message}, nil)
	}()
}

// Status builds the SystemStatus. Call it on the executor.
func (s *System) Status() msg.SystemStatus {
	now := s.h.Exec.Now()
	st := msg.SystemStatus{
		ServerName: s.o.Settings.Get().System.ServerName,
		Version:    s.o.Version,
		Timestamp:  float64(now.UnixNano()) / 1e9,
		Nodes:      []msg.NodeSummary{},
		BusCA:      s.o.BusCAFingerprint,
	}
	if !s.started.IsZero() {
		st.UptimeSeconds = uint64(now.Sub(s.started) / time.Second)
	}
	for _, a := range s.o.Adoption.Adopted() {
		ns := msg.NodeSummary{NodeID: a.NodeID, DisplayName: a.DisplayName, Role: a.Role, Instance: a.Instance, Online: a.Online}
		if a.LastStatus != nil {
			ns.State, ns.CPUTemp = a.LastStatus.State, a.LastStatus.CPUTemp
		}
		st.Nodes = append(st.Nodes, ns)
	}
	st.CPUUsage = float32(s.host.metrics.CPUUsagePct)
	st.MemoryUsage = float32(s.host.metrics.MemoryUsagePct)
	st.CPUTemp = float32(s.host.metrics.CPUTempC)
	st.InternalAddress, st.ExternalAddress = s.host.internal, s.host.external
	st.UnadoptedCount = int32(len(s.o.Adoption.Unadopted()))
	st.EStopActive = s.o.EStopActive()
	clients := len(s.h.Gateway.Clients())
	st.Inputs = []msg.InputStatus{
		{Source: msg.SourceWebSocket, Enabled: true, Active: clients > 0, Detail: fmt.Sprintf("%d clients", clients)},
	}
	for _, in := range s.o.Inputs {
		st.Inputs = append(st.Inputs, in(now))
	}
	return st
}

func (s *System) cmdStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var st msg.SystemStatus
	err := s.h.Do(ctx, func() { st = s.Status() })
	return st, err
}

// powerParams are shutdown's and reboot's parameters: reboot's node (or
// node_id), reason (recorded in the activity log).
type powerParams struct {
	Node   string `json:"node"`
	NodeID string `json:"node_id"`
	Reason string `json:"reason"`
}

func (s *System) cmdShutdown(_ context.Context, c *ws.Client, raw json.RawMessage) (any, error) {
	var p powerParams
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if s.o.Power == nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "shutdown is not available on this server (no power control)"}
	}
	s.h.Log.Warn("system shutdown requested", "source", "system", "client", c.Info().ID, "reason", p.Reason)
	if err := s.o.Power.Shutdown(p.Reason); err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "shutdown: " + err.Error()}
	}
	return msg.SystemCommandResponse{Success: true, Message: "shutting down"}, nil
}

// cmdReboot reboots one node (params node) or the server's system.
// A node reboots its software: it stops its role, checks for firmware
// and resumes the role (the node's update service).
func (s *System) cmdReboot(ctx context.Context, c *ws.Client, raw json.RawMessage) (any, error) {
	var p powerParams
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	field, id := "node", p.Node
	if id == "" {
		field, id = "node_id", p.NodeID
	}
	if id == "" {
		if s.o.Power == nil {
			return nil, &ws.Error{Code: ws.CodeFailed, Message: "reboot is not available on this server (no power control)"}
		}
		s.h.Log.Warn("system reboot requested", "source", "system", "client", c.Info().ID, "reason", p.Reason)
		if err := s.o.Power.Reboot(p.Reason); err != nil {
			return nil, &ws.Error{Code: ws.CodeFailed, Message: "reboot: " + err.Error()}
		}
		return msg.SystemCommandResponse{Success: true, Message: "rebooting"}, nil
	}
	if !msg.ValidNodeID(id) {
		return nil, ws.ParamError(field, "%q is not a node id", id)
	}
	var known bool
	if err := s.h.Do(ctx, func() {
		u, a, st := s.o.Adoption.Lookup(id)
		known = u != nil || a != nil || st != nil
	}); err != nil {
		return nil, err
	}
	if !known {
		return nil, ws.ParamError(field, "unknown node %s", id)
	}
	var resp msg.NodeUpdateResponse
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.h.Bus.Call(cctx, msg.NodeUpdateService(id), msg.NodeUpdateRequest{NodeID: id}, &resp); err != nil {
		if errors.Is(err, bus.ErrNoResponders) {
			return nil, ws.ParamError(field, "node %s is not online", id)
		}
		return nil, err
	}
	if !resp.Success {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "reboot refused by " + id + ": " + resp.Message}
	}
	s.h.Log.Info("node reboot requested", "source", "system", "node", id, "client", c.Info().ID)
	return msg.SystemCommandResponse{Success: true, Message: resp.Message}, nil
}
