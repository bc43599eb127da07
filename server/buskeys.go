package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/busaccess"
	"github.com/saint-os/saint/server/ws"
)

// keyRejecter is a bus authority that can shut a key out
// (busaccess.Authority): for a device that took an unadopted node's id
// with a key that is not the one the node logs.
type keyRejecter interface {
	Reject(id, key string) error
	Allow(key string) (bool, error)
	Rejected() []busaccess.Rejection
}

// registerKeyRejection installs reject_node_key, allow_node_key and
// list_rejected_keys when the bus has keys to reject.
func (s *Server) registerKeyRejection(g *ws.Gateway, kr keyRejecter) {
	g.Handle("management", "reject_node_key", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		p, err := decodeNodeKey(raw)
		if err != nil {
			return nil, err
		}
		if err := kr.Reject(p.NodeID, p.BusKey); err != nil {
			if errors.Is(err, busaccess.ErrNotRejectable) {
				return nil, ws.ParamError("bus_key", "%s", err.Error())
			}
			return nil, &ws.Error{Code: ws.CodeFailed, Message: err.Error()}
		}
		s.log.Warn("bus key "+p.BusKey+" rejected: the device using it under "+p.NodeID+" is disconnected and refused", "source", "adoption", "node", p.NodeID)
		return map[string]any{"success": true, "message": "key " + p.BusKey + " rejected; " + p.NodeID + " is free for the node's own key"}, nil
	})
	g.Handle("management", "allow_node_key", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		var p struct {
			BusKey string `json:"bus_key"`
		}
		if err := ws.DecodeParams(raw, &p); err != nil {
			return nil, err
		}
		ok, err := kr.Allow(p.BusKey)
		if err != nil {
			return nil, &ws.Error{Code: ws.CodeFailed, Message: err.Error()}
		}
		if !ok {
			return nil, ws.ParamError("bus_key", "%q is not a rejected key", p.BusKey)
		}
		s.log.Info("bus key "+p.BusKey+" allowed again", "source", "adoption")
		return map[string]any{"success": true}, nil
	})
	g.Handle("management", "list_rejected_keys", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		return map[string]any{"keys": kr.Rejected()}, nil
	})
}

// nodeKey names a node and a bus key: the parameters of reject_node_key
// and enrol_node.
type nodeKey struct {
	NodeID string `json:"node_id"`
	BusKey string `json:"bus_key"`
}

// decodeNodeKey decodes a nodeKey, refusing a node_id that is not one.
func decodeNodeKey(raw json.RawMessage) (nodeKey, error) {
	var p nodeKey
	if err := ws.DecodeParams(raw, &p); err != nil {
		return p, err
	}
	if !msg.ValidNodeID(p.NodeID) {
		return p, ws.ParamError("node_id", "%q is not a node id: want 1-64 letters, digits, '-' or '_'", p.NodeID)
	}
	return p, nil
}
