package balance

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// Register forwards the balancing base's debug console (the
// saul-tee reference's serial commands) to the balance role's bus service:
//
//	{"type":"command","target":"balance","action":"console","params":{"line":"status"}}
//
// answers {"output": "...", "ok": true}. saintctl balance CMD... uses it.
//
// It also answers "balance arm" and "balance disarm" (no parameters) with
// the console's arm and disarm, so the base's own checks decide: arming is
// refused unless the base is upright, its IMU and IO board alive, no
// emergency stop and no RC loss, and the answer says why:
//
//	{"success": false, "message": "arm: refused: not upright (pitch 14.0°, arming needs within ±10°)"}
//
// Driving is the router's ("balance drive" and "balance stop").
func Register(h *feature.Host) {
	h.Gateway.HandleCommand("balance", "console", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		return console(ctx, h.Bus, raw)
	})
	for _, action := range []string{"arm", "disarm"} {
		h.Gateway.HandleCommand("balance", action, func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
			return armCommand(ctx, h.Bus, action, raw)
		})
	}
}

// armCommand runs the console's arm or disarm and answers with its verdict.
func armCommand(ctx context.Context, b bus.Bus, action string, raw json.RawMessage) (any, error) {
	if len(raw) > 0 && string(raw) != "null" {
		var none map[string]json.RawMessage
		if err := ws.DecodeParams(raw, &none); err != nil {
			return nil, err
		}
		for k := range none {
			return nil, ws.ParamError(k, "unknown field: balance %s takes no parameters", action)
		}
	}
	resp, err := bus.CallJSON[msg.BalanceConsoleResponse](ctx, b, msg.ServiceBalanceConsole, msg.BalanceConsoleRequest{Line: action})
	if err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "balance " + action + ": " + err.Error()}
	}
	if !resp.OK {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: resp.Output}
	}
	return map[string]any{"success": true, "message": resp.Output}, nil
}

func console(ctx context.Context, b bus.Bus, raw json.RawMessage) (any, error) {
	var req msg.BalanceConsoleRequest
	if err := ws.DecodeParams(raw, &req); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Line) == "" {
		return nil, ws.ParamError("line", "missing: a console command such as \"status\" or \"help\"")
	}
	resp, err := bus.CallJSON[msg.BalanceConsoleResponse](ctx, b, msg.ServiceBalanceConsole, req)
	if err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "balance console: " + err.Error()}
	}
	return resp, nil
}
