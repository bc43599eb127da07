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
func Register(h *feature.Host) {
	h.Gateway.HandleCommand("balance", "console", func(ctx context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
		return console(ctx, h.Bus, raw)
	})
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
