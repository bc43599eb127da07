package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saint-os/saint/cmd/internal/proctest"
	"github.com/saint-os/saint/fixtures"
	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/ws/wsclient"
	"github.com/saint-os/saint/server/ws/wsclient/wsclienttest"
)

func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "saint-server")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// TestAuthentication runs saint-server as installed: the API needs the
// token it generated in the data directory, 0600; without a token it
// listens on loopback only.
func TestAuthentication(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-server")
	}
	bin := build(t)
	t.Run("token required", func(t *testing.T) { tokenRequired(t, bin) })
	t.Run("no-auth refuses a public address", func(t *testing.T) { noAuthRefusesPublicAddress(t, bin) })
	t.Run("damaged rejected keys refuse to start", func(t *testing.T) { damagedRejectedKeys(t, bin) })
}

// saint-server does not start on a list of rejected bus keys that reads
// null, empty or truncated, as on a garbled one: the keys it held would
// connect again. The file is left as it is for the administrator.
func damagedRejectedKeys(t *testing.T, bin string) {
	for _, content := range []string{"null", "", `[{"key":"UA`} {
		data := t.TempDir()
		rejected := filepath.Join(data, "bus", "rejected.json")
		if err := os.MkdirAll(filepath.Dir(rejected), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rejected, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "--data", data, "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--nats", "127.0.0.1:0",
			"--firmware-http", "", "--power=false").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "rejected.json") {
			t.Errorf("rejected.json = %q: err %v, output:\n%s", content, err, out)
		}
		if b, err := os.ReadFile(rejected); err != nil || string(b) != content {
			t.Errorf("rejected.json = %q was changed: %q, %v", content, b, err)
		}
	}
}

func tokenRequired(t *testing.T, bin string) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	addrs := proctest.Start(t, bin, "--data", data, "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--nats", "127.0.0.1:0",
		"--firmware-http", "", "--power=false")
	fi, err := os.Stat(filepath.Join(data, auth.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	tok, _ := os.ReadFile(filepath.Join(data, auth.FileName))
	token := strings.TrimSpace(string(tok))

	url := "ws://" + addrs["ws"] + "/saint"
	anon := wsclienttest.Dial(t, url, "")
	var ce *wsclient.CallError
	if err := anon.Call("management", "", "list_adopted", nil, nil); !errors.As(err, &ce) || ce.Code != "unauthorized" {
		t.Fatalf("without a token: %v, want unauthorized", err)
	}
	var de *wsclient.DialError
	if _, err := wsclient.Dial(context.Background(), url, strings.Repeat("0", 64)); !errors.As(err, &de) || de.Status != 401 {
		t.Errorf("wrong bearer token: %v", err)
	}
	if err := wsclienttest.Dial(t, url, token).Call("management", "", "list_adopted", nil, nil); err != nil {
		t.Fatalf("with the token: %v", err)
	}
}

func noAuthRefusesPublicAddress(t *testing.T, bin string) {
	out, err := exec.Command(bin, "--data", t.TempDir(), "--no-auth", "--http", "0.0.0.0:0", "--ws", "127.0.0.1:0",
		"--nats", "127.0.0.1:0", "--firmware-http", "").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Errorf("--no-auth on 0.0.0.0: err %v, output:\n%s", err, out)
	}
}

// The robot_type flags resolve in the configuration tree; a wrong one is
// an error listing the available ones.
func TestResolveRobot(t *testing.T) {
	dir := t.TempDir()
	if err := fixtures.WriteConfig(dir); err != nil {
		t.Fatal(err)
	}
	fixed := func(s string) func() (string, error) { return func() (string, error) { return s, nil } }
	if r, err := resolveRobot(dir, fixed("")); r != nil || err != nil {
		t.Errorf("no flags: %v, %v", r, err)
	}
	r, err := resolveRobot(dir, fixed("saint-T-0L10A2G3H0W"))
	if err != nil || len(r.Actions) == 0 {
		t.Fatalf("the reference robot: %v", err)
	}
	if h, err := resolveRobot(dir, fixed("pi_plus-S-12L8A0G2H0W")); err != nil || h.Joints.DOFs != 22 {
		t.Errorf("the humanoid: %v", err)
	}
	if _, err := resolveRobot(dir, fixed("pi_plus-S-12L8A0G2H1W")); err == nil || !strings.Contains(err.Error(), "available: pi_plus-S-12L8A0G2H0W, saint-T-0L10A2G3H0W, saint_can-T-0L10A2G3H0W") {
		t.Errorf("a robot type without configuration: %v", err)
	}
}
