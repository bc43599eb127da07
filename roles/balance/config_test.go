package balance_test

import (
	"strings"
	"testing"

	"github.com/saint-os/saint/roleconfig"
	"github.com/saint-os/saint/roles/balance"
	"github.com/saint-os/saint/roles/rolekit/roletest"
)

func TestBalanceConfigFixtureAndErrors(t *testing.T) {
	bc, err := balance.ConfigOf(roletest.Config(t, "balance"))
	if err != nil {
		t.Fatal(err)
	}
	if bc.TiltLimitDeg != 25 || bc.SpeedLimitPct != 10 || bc.WatchdogMS != 50 || bc.CANTimeoutMS != 500 ||
		bc.VESCLeftID != 68 || bc.VESCRightID != 56 || bc.TelemetryRateHz != 10 {
		t.Errorf("fixture %+v: want the reference's limits", bc)
	}
	for _, c := range []struct {
		yaml, field string
	}{
		{"balance: {tilt_limit_deg: 50}", "balance.tilt_limit_deg"},
		{"balance: {speed_limit_pct: 15}", "balance.speed_limit_pct"},
		{"balance: {watchdog_ms: 0}", "balance.watchdog_ms"},
		{"balance: {watchdog_ms: 60000}", "balance.watchdog_ms"},
		{"balance: {can_timeout_ms: 3600000}", "balance.can_timeout_ms"},
		{"link_timeout_ms: 50", "link_timeout_ms"},
		{"balance: {vesc_left_id: 300}", "balance.vesc_left_id"},
		{"balance: {pid: {kp: -1}}", "balance.pid"},
		{"balance: {no_such_field: 1}", "no_such_field"},
	} {
		cfg, err := roleconfig.Parse([]byte("role: balance\nversion: \"1\"\n" + c.yaml + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if _, err := balance.ConfigOf(cfg); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want one naming %s", c.yaml, err, c.field)
		}
	}
}
