package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/ws"
)

// registerSystem registers the spec's "system" target: status, shutdown,
// reboot.
func (s *Server) registerSystem() {
	g := s.gateway
	g.HandleCommand("system", "status", s.cmdSystemStatus)
	g.HandleCommand("system", "shutdown", s.cmdSystemShutdown)
	g.HandleCommand("system", "reboot", s.cmdSystemReboot)
}

// systemStatus builds SystemStatus; it runs on the executor.
func (s *Server) systemStatus() msg.SystemStatus {
	now := s.ex.Now()
	st := msg.SystemStatus{
		ServerName: s.settings.Get().System.ServerName,
		Version:    s.o.Version,
		Timestamp:  float64(now.UnixNano()) / 1e9,
		Nodes:      []msg.NodeSummary{},
	}
	if !s.started.IsZero() {
		st.UptimeSeconds = uint64(now.Sub(s.started) / time.Second)
	}
	for _, a := range s.adoption.Adopted() {
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
	st.UnadoptedCount = int32(len(s.adoption.Unadopted()))
	st.EStopActive = s.router.EStopActive()
	clients := len(s.gateway.Clients())
	st.Inputs = []msg.InputStatus{
		{Source: msg.SourceWebSocket, Enabled: true, Active: clients > 0, Detail: fmt.Sprintf("%d clients", clients)},
		s.rcInput(now),
	}
	return st
}

// rcInput is the RC receiver's line of the dashboard's INPUTS box.
func (s *Server) rcInput(now time.Time) msg.InputStatus {
	cfg := s.settings.Get().RC
	in := msg.InputStatus{Source: msg.SourceRC, Enabled: cfg.Enabled, Detail: "no receiver"}
	if st, ok := s.rcFresh(now); ok {
		in.Active = st.Connected && !st.Failsafe
		in.Detail = fmt.Sprintf("%dch %s", st.ChannelCount, strings.ToUpper(st.Protocol))
		if st.Failsafe {
			in.Detail += " (failsafe)"
		}
	}
	return in
}

func (s *Server) cmdSystemStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var st msg.SystemStatus
	err := s.onExec(ctx, func() { st = s.systemStatus() })
	return st, err
}

// powerParams are shutdown's and reboot's parameters: reboot's node (the
// spec's), reason (recorded in the activity log).
type powerParams struct {
	Node   string `json:"node"`
	NodeID string `json:"node_id"`
	Reason string `json:"reason"`
}

func (s *Server) cmdSystemShutdown(_ context.Context, c *ws.Client, raw json.RawMessage) (any, error) {
	var p powerParams
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if s.o.Power == nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "shutdown is not available on this server (no power control)"}
	}
	s.log.Warn("system shutdown requested", "source", "system", "client", c.Info().ID, "reason", p.Reason)
	if err := s.o.Power.Shutdown(p.Reason); err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "shutdown: " + err.Error()}
	}
	return msg.SystemCommandResponse{Success: true, Message: "shutting down"}, nil
}

// cmdSystemReboot reboots one node (params node) or the server's system.
// A node reboots its software: it stops its role, checks for firmware
// and resumes the role (the node's update service).
func (s *Server) cmdSystemReboot(ctx context.Context, c *ws.Client, raw json.RawMessage) (any, error) {
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
		s.log.Warn("system reboot requested", "source", "system", "client", c.Info().ID, "reason", p.Reason)
		if err := s.o.Power.Reboot(p.Reason); err != nil {
			return nil, &ws.Error{Code: ws.CodeFailed, Message: "reboot: " + err.Error()}
		}
		return msg.SystemCommandResponse{Success: true, Message: "rebooting"}, nil
	}
	if !msg.ValidNodeID(id) {
		return nil, ws.ParamError(field, "%q is not a node id", id)
	}
	var known bool
	if err := s.onExec(ctx, func() {
		u, a, st := s.adoption.Lookup(id)
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
	if err := s.o.Bus.Call(cctx, msg.NodeUpdateService(id), msg.NodeUpdateRequest{NodeID: id}, &resp); err != nil {
		if errors.Is(err, bus.ErrNoResponders) {
			return nil, ws.ParamError(field, "node %s is not online", id)
		}
		return nil, err
	}
	if !resp.Success {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "reboot refused by " + id + ": " + resp.Message}
	}
	s.log.Info("node reboot requested", "source", "system", "node", id, "client", c.Info().ID)
	return msg.SystemCommandResponse{Success: true, Message: resp.Message}, nil
}
