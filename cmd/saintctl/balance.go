package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// balanceUsage lists the balancing base's debug console commands (the
// saul-tee reference's serial console), which saintctl balance forwards.
const balanceUsage = `usage: saintctl balance CMD [ARGS...]
  help | status | pid KP KI KD | arm | disarm | estop | tilt_limit DEG |
  speed_limit PCT | can_stats | uart_stats | calibrate | reboot`

// balanceCmd runs one console line on the balance role through the
// server ({"type":"command","target":"balance","action":"console"}) and
// prints the role's output. A refused command is an error (exit status 1)
// after its output.
func balanceCmd(ctx context.Context, c *client, out io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New(balanceUsage)
	}
	data, err := c.call(ctx, "command/balance", "console", map[string]any{"line": strings.Join(args, " ")})
	if err != nil {
		return err
	}
	var resp struct {
		Output string `json:"output"`
		OK     bool   `json:"ok"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		return fmt.Errorf("balance: answer %s: %w", data, err)
	}
	fmt.Fprintln(out, resp.Output)
	if !resp.OK {
		return fmt.Errorf("balance %s: refused", args[0])
	}
	return nil
}
