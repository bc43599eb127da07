package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/saint-os/saint/server/busaccess"
	"github.com/saint-os/saint/server/ws"
)

// keyEnroller is a bus authority that registers nodes' keys before their
// first boot (busaccess.Authority).
type keyEnroller interface {
	Enrol(id, key string) error
	Unenrol(id string) (bool, error)
	Enrolments() []busaccess.Enrolment
}

// registerEnrolment installs enrol_node, unenrol_node and
// list_enrolled_nodes: what flash_node.sh (through saintctl nodes enrol)
// registers a node's key with, so that the node's first contact is
// authenticated both ways.
func (s *Server) registerEnrolment(g *ws.Gateway, ke keyEnroller) {
	g.Handle("management", "enrol_node", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		p, err := decodeNodeKey(raw)
		if err != nil {
			return nil, err
		}
		if err := ke.Enrol(p.NodeID, p.BusKey); err != nil {
			if errors.Is(err, busaccess.ErrNotEnrolable) {
				return nil, ws.ParamError("bus_key", "%s", err.Error())
			}
			return nil, &ws.Error{Code: ws.CodeFailed, Message: err.Error()}
		}
		s.log.Info("node "+p.NodeID+" enrolled with bus key "+p.BusKey+": it connects only to this server, and only with that key", "source", "adoption", "node", p.NodeID)
		return map[string]any{
			"success": true, "node_id": p.NodeID, "bus_key": p.BusKey,
			// The node is given this to trust; the operator compares it
			// with the one the server logs at start.
			"ca_sha256": s.o.BusCAFingerprint,
			"message":   p.NodeID + " enrolled",
		}, nil
	})
	g.Handle("management", "unenrol_node", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var p struct {
			NodeID string `json:"node_id"`
		}
		if err := ws.DecodeParams(raw, &p); err != nil {
			return nil, err
		}
		ok, err := ke.Unenrol(p.NodeID)
		if err != nil {
			return nil, &ws.Error{Code: ws.CodeFailed, Message: err.Error()}
		}
		if !ok {
			return nil, ws.ParamError("node_id", "%q is not enrolled", p.NodeID)
		}
		s.log.Warn("node "+p.NodeID+"'s enrolment removed: its id is open to a new key", "source", "adoption", "node", p.NodeID)
		return map[string]any{"success": true}, nil
	})
	g.Handle("management", "list_enrolled_nodes", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		return map[string]any{"nodes": ke.Enrolments(), "ca_sha256": s.o.BusCAFingerprint}, nil
	})
}
