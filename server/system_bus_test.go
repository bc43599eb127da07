package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/msg"
)

// /saint/system/shutdown and /saint/system/command are served on the bus,
// for programs there (an autonomy stack, a bridge).
func TestSystemServicesOnTheBus(t *testing.T) {
	p := &fakePower{}
	r, b := apiRobot(t, p, nil)
	call := func(service string, req msg.SystemCommandRequest) msg.SystemCommandResponse {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := bus.CallJSON[msg.SystemCommandResponse](ctx, b, service, req)
		if err != nil {
			t.Fatalf("%s %+v: %v", service, req, err)
		}
		return resp
	}
	calls := p.got

	if resp := call(msg.ServiceSystemShutdown, msg.SystemCommandRequest{Reason: "battery"}); !resp.Success || calls() != "shutdown:battery" {
		t.Fatalf("shutdown: %+v, power calls %q", resp, calls())
	}
	if resp := call(msg.ServiceSystemShutdown, msg.SystemCommandRequest{Command: msg.CommandReboot}); resp.Success || !strings.Contains(resp.Message, msg.ServiceSystemCommand) {
		t.Errorf("reboot on the shutdown service: %+v, want refused, pointing at %s", resp, msg.ServiceSystemCommand)
	}
	if resp := call(msg.ServiceSystemCommand, msg.SystemCommandRequest{Command: msg.CommandReboot, Reason: "update"}); !resp.Success || calls() != "shutdown:battery,reboot:update" {
		t.Errorf("reboot: %+v, power calls %q", resp, calls())
	}

	estop := func() bool {
		var on bool
		if err := r.ex.Do(context.Background(), func() { on = r.srv.Router().EStopActive() }); err != nil {
			t.Fatal(err)
		}
		return on
	}
	if resp := call(msg.ServiceSystemCommand, msg.SystemCommandRequest{Command: msg.CommandEStop, Reason: "obstacle"}); !resp.Success || !estop() {
		t.Fatalf("estop: %+v, engaged %v", resp, estop())
	}
	if resp := call(msg.ServiceSystemCommand, msg.SystemCommandRequest{Command: msg.CommandClearEStop}); !resp.Success || estop() {
		t.Fatalf("clear_estop: %+v, engaged %v", resp, estop())
	}

	// Delayed: answered at once, done later. (2 s: the check that it is
	// not done at once must come before the delay ends, on a slow machine
	// too.)
	if resp := call(msg.ServiceSystemCommand, msg.SystemCommandRequest{Command: msg.CommandEStop, DelaySeconds: 2}); !resp.Success || estop() {
		t.Fatalf("delayed estop: %+v, engaged at once %v", resp, estop())
	}
	bustest.WaitUntil(t, 20*time.Second, "the delayed estop to engage", estop)

	for _, c := range []struct {
		req  msg.SystemCommandRequest
		want string
	}{
		{msg.SystemCommandRequest{Command: "dance"}, `"dance"`},
		{msg.SystemCommandRequest{Command: msg.CommandReboot, NodeID: "no/such"}, "node_id"},
		{msg.SystemCommandRequest{Command: msg.CommandReboot, NodeID: "ghost"}, "not online"},
		{msg.SystemCommandRequest{Command: msg.CommandShutdown, DelaySeconds: -1}, "delay_seconds"},
		{msg.SystemCommandRequest{Command: msg.CommandRestart}, "restart"},
	} {
		if resp := call(msg.ServiceSystemCommand, c.req); resp.Success || !strings.Contains(resp.Message, c.want) {
			t.Errorf("%+v: %+v, want refused naming %s", c.req, resp, c.want)
		}
	}
}
