package server_test

import (
	"testing"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
)

// The balance console command reaches the balance role's bus service and
// brings its answer back.
func TestBalanceConsoleForwarded(t *testing.T) {
	r, b := apiRobot(t, nil, nil)
	var got []string
	sub, err := bus.ServeJSON(b, msg.ServiceBalanceConsole, r.ex, func(req msg.BalanceConsoleRequest, reply func(msg.BalanceConsoleResponse, error)) {
		got = append(got, req.Line)
		reply(msg.BalanceConsoleResponse{Output: "echo " + req.Line, OK: req.Line != "bogus"}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	c, _, err := dialAPI(t, r.wsURL(), bearer(r.srv.Token()))
	if err != nil {
		t.Fatal(err)
	}
	var out msg.BalanceConsoleResponse
	c.ok("command", "balance", "console", map[string]any{"line": "speed_limit 20"}, &out)
	if out.Output != "echo speed_limit 20" || !out.OK {
		t.Errorf("answer %+v", out)
	}
	c.ok("command", "balance", "console", map[string]any{"line": "bogus"}, &out)
	if out.OK {
		t.Errorf("a refused command came back ok: %+v", out)
	}
	c.fails("command", "balance", "console", map[string]any{}, "invalid_params", "line")
	c.fails("command", "balance", "console", map[string]any{"line": 3}, "invalid_params", "line")
}
