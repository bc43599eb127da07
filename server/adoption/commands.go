package adoption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/firmware"
	"github.com/saint-os/saint/server/ws"
)

// commands are the management commands on nodes, over a Manager.
type commands struct {
	h *feature.Host
	m *Manager
}

// Register adds the Manager to h as a component and installs the
// management commands on nodes: list_unadopted, list_adopted,
// get_gpio_status, list_roles, adopt_node, reset_node, get_node_info,
// set_node_name, firmware_status and trigger_update.
func Register(h *feature.Host, m *Manager) {
	h.Add(m)
	s := &commands{h: h, m: m}
	g := h.Gateway
	g.Handle("management", "list_unadopted", s.listUnadopted)
	g.Handle("management", "list_adopted", s.listAdopted)
	g.Handle("management", "get_gpio_status", s.getGPIOStatus)
	g.Handle("management", "list_roles", s.listRoles)
	g.Handle("management", "adopt_node", s.adoptNode)
	g.Handle("management", "reset_node", s.resetNode)
	g.Handle("management", "get_node_info", s.getNodeInfo)
	g.Handle("management", "set_node_name", s.setNodeName)
	g.Handle("management", "firmware_status", s.firmwareStatus)
	g.Handle("management", "trigger_update", s.triggerUpdate)
}

type nodeIDParams struct {
	NodeID string `json:"node_id"`
}

func requireNodeID(raw json.RawMessage) (string, error) {
	var p nodeIDParams
	if err := ws.DecodeParams(raw, &p); err != nil {
		return "", err
	}
	if p.NodeID == "" {
		return "", ws.ParamError("node_id", "required")
	}
	if !msg.ValidNodeID(p.NodeID) {
		return "", ws.ParamError("node_id", "%q is not a node id", p.NodeID)
	}
	return p.NodeID, nil
}

// unadoptedView is one row of list_unadopted.
type unadoptedView struct {
	msg.NodeGPIOStatus
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	// BusKey is the public nkey the node connects with, on an
	// authenticated bus.
	BusKey string `json:"bus_key,omitempty"`
	// BusKeyEnrolled: BusKey is the key the node was enrolled with.
	BusKeyEnrolled bool `json:"bus_key_enrolled"`
}

func (s *commands) listUnadopted(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var rows []unadoptedView
	err := s.h.Do(ctx, func() {
		for _, u := range s.m.Unadopted() {
			rows = append(rows, unadoptedView{u.Status, u.FirstSeen, u.LastSeen, u.BusKey, u.BusKeyEnrolled})
		}
	})
	if rows == nil {
		rows = []unadoptedView{}
	}
	return map[string]any{"nodes": rows, "count": len(rows)}, err
}

func (s *commands) listAdopted(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	var rows []Adopted
	err := s.h.Do(ctx, func() {
		for _, a := range s.m.Adopted() {
			rows = append(rows, *a)
		}
	})
	if rows == nil {
		rows = []Adopted{}
	}
	return map[string]any{"nodes": rows, "count": len(rows)}, err
}

func (s *commands) getGPIOStatus(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	id, err := requireNodeID(raw)
	if err != nil {
		return nil, err
	}
	var u *Unadopted
	var a *Adopted
	if err := s.h.Do(ctx, func() { u, a, _ = s.m.Lookup(id) }); err != nil {
		return nil, err
	}
	if u == nil && a == nil {
		return nil, ws.ParamError("node_id", "unknown node %s", id)
	}
	// Ask the node for a fresh probe; fall back to its last announcement.
	var resp msg.GPIOProbeResponse
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err = s.h.Bus.Call(cctx, msg.NodeGPIOProbeService(id), msg.GPIOProbeRequest{NodeID: id}, &resp)
	if err == nil && resp.Success {
		return resp.Status, nil
	}
	if u != nil {
		return u.Status, nil
	}
	return nil, fmt.Errorf("node %s did not answer the GPIO probe: %v", id, err)
}

// listRoles answers which roles adopt_node takes: those the robot type
// declares, or any role (any_role) when the server runs without one.
func (s *commands) listRoles(context.Context, *ws.Client, json.RawMessage) (any, error) {
	robotType, roles := s.m.Roles()
	anyRole := roles == nil
	if anyRole {
		roles = []RoleChoice{}
	}
	return map[string]any{"robot_type": robotType, "any_role": anyRole, "roles": roles}, nil
}

func (s *commands) adoptNode(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var req msg.AdoptNodeRequest
	if err := ws.DecodeParams(raw, &req); err != nil {
		return nil, err
	}
	if req.NodeID == "" {
		return nil, ws.ParamError("node_id", "required")
	}
	if req.Role == "" {
		return nil, ws.ParamError("role", "required; want %s", s.m.declaredList())
	}
	req.AssignedBy = "admin"
	resp, err := feature.Await(ctx, s.h, func(finish func(msg.AdoptNodeResponse, error)) {
		s.m.Adopt(req, finish)
	})
	if err != nil {
		return nil, err
	}
	if !resp.Success {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "adoption refused by " + req.NodeID + ": " + resp.Message}
	}
	return resp, nil
}

func (s *commands) resetNode(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var req msg.ResetNodeRequest
	if err := ws.DecodeParams(raw, &req); err != nil {
		return nil, err
	}
	if req.NodeID == "" {
		return nil, ws.ParamError("node_id", "required")
	}
	resp, err := feature.Await(ctx, s.h, func(finish func(msg.ResetNodeResponse, error)) {
		s.m.Reset(req, finish)
	})
	if err != nil {
		return nil, err
	}
	if !resp.Success {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "reset refused by " + req.NodeID + ": " + resp.Message}
	}
	return resp, nil
}

// NodeInfo is get_node_info's answer: everything the server knows of a node.
type NodeInfo struct {
	NodeID      string              `json:"node_id"`
	Adopted     bool                `json:"adopted"`
	Online      bool                `json:"online"`
	State       string              `json:"state"`
	Role        string              `json:"role,omitempty"`
	Instance    string              `json:"instance,omitempty"`
	DisplayName string              `json:"display_name,omitempty"`
	AdoptedAt   *time.Time          `json:"adopted_at,omitempty"`
	TopicPrefix string              `json:"topic_prefix,omitempty"`
	Status      *msg.NodeStatus     `json:"status,omitempty"`
	GPIO        *msg.NodeGPIOStatus `json:"gpio_status,omitempty"`
}

func (s *commands) getNodeInfo(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	id, err := requireNodeID(raw)
	if err != nil {
		return nil, err
	}
	var info NodeInfo
	found := false
	err = s.h.Do(ctx, func() {
		u, a, st := s.m.Lookup(id)
		found = u != nil || a != nil || st != nil
		info = NodeInfo{NodeID: id, Status: st}
		if st != nil {
			info.State = st.State
			info.Online = s.h.Exec.Now().Sub(time.Unix(0, int64(st.Timestamp*1e9))) < OnlineWindow
		}
		if u != nil {
			g := u.Status
			info.GPIO = &g
			info.Online = true
			if info.State == "" {
				info.State = msg.StateUnadopted
			}
		}
		if a != nil {
			t := a.AdoptedAt
			info.Adopted, info.Online = true, a.Online
			info.Role, info.Instance, info.DisplayName, info.AdoptedAt, info.TopicPrefix = a.Role, a.Instance, a.DisplayName, &t, a.TopicPrefix
		}
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ws.ParamError("node_id", "unknown node %s", id)
	}
	return info, nil
}

func (s *commands) setNodeName(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		NodeID      string `json:"node_id"`
		DisplayName string `json:"display_name"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.NodeID == "" {
		return nil, ws.ParamError("node_id", "required")
	}
	if strings.TrimSpace(p.DisplayName) == "" {
		return nil, ws.ParamError("display_name", "required")
	}
	var err error
	if e := s.h.Do(ctx, func() { err = s.m.SetDisplayName(p.NodeID, strings.TrimSpace(p.DisplayName)) }); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	return map[string]string{"node_id": p.NodeID, "display_name": strings.TrimSpace(p.DisplayName)}, nil
}

// nodeFirmware is one node's firmware in firmware_status.
type nodeFirmware struct {
	NodeID   string `json:"node_id"`
	Version  string `json:"version"`
	State    string `json:"state"`
	UpToDate bool   `json:"up_to_date"`
}

func (s *commands) firmwareStatus(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	st := firmware.Status{Problem: "no firmware repository", Configs: map[string]firmware.ConfigVersion{}}
	if s.m.o.Firmware != nil {
		st = s.m.o.Firmware.Status()
	}
	var nodes []nodeFirmware
	err := s.h.Do(ctx, func() {
		seen := map[string]bool{}
		add := func(id, ver, state string) {
			if seen[id] {
				return
			}
			seen[id] = true
			up := st.Firmware != nil && ver == st.Firmware.Version
			nodes = append(nodes, nodeFirmware{id, ver, state, up})
		}
		for _, a := range s.m.Adopted() {
			if a.LastStatus != nil {
				add(a.NodeID, a.LastStatus.FirmwareVersion, a.LastStatus.State)
			}
		}
		for _, u := range s.m.Unadopted() {
			add(u.NodeID, u.Status.FirmwareVersion, msg.StateUnadopted)
		}
	})
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].NodeID < nodes[j].NodeID })
	if nodes == nil {
		nodes = []nodeFirmware{}
	}
	return map[string]any{"repository": st, "nodes": nodes}, err
}

func (s *commands) triggerUpdate(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	var p struct {
		NodeID string `json:"node_id"`
		Force  bool   `json:"force"`
	}
	if err := ws.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	var ids []string
	if p.NodeID != "" {
		if !msg.ValidNodeID(p.NodeID) {
			return nil, ws.ParamError("node_id", "%q is not a node id", p.NodeID)
		}
		ids = []string{p.NodeID}
	} else {
		_ = s.h.Do(ctx, func() {
			for _, a := range s.m.Adopted() {
				if a.Online {
					ids = append(ids, a.NodeID)
				}
			}
			for _, u := range s.m.Unadopted() {
				ids = append(ids, u.NodeID)
			}
		})
	}
	type result struct {
		NodeID  string `json:"node_id"`
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	results := []result{}
	for _, id := range ids {
		var resp msg.NodeUpdateResponse
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := s.h.Bus.Call(cctx, msg.NodeUpdateService(id), msg.NodeUpdateRequest{NodeID: id, Force: p.Force}, &resp)
		cancel()
		if err != nil {
			if p.NodeID != "" && errors.Is(err, bus.ErrNoResponders) {
				return nil, ws.ParamError("node_id", "node %s is not online", id)
			}
			results = append(results, result{id, false, err.Error()})
			continue
		}
		results = append(results, result{id, resp.Success, resp.Message})
	}
	return map[string]any{"nodes": results}, nil
}
