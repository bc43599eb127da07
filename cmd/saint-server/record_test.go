package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/ws/wsclient/wsclienttest"
)

// TestRecordAndFoxglove runs saint-server with --record and --foxglove:
// the Foxglove server sits behind the API token, the recording runs from
// the start (record_status says so), and when the server stops its file is
// complete.
func TestRecordAndFoxglove(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs saint-server")
	}
	bin := build(t)
	dir := t.TempDir()
	data, recDir := filepath.Join(dir, "data"), filepath.Join(dir, "recordings")
	addrFile := filepath.Join(dir, "addrs.json")
	cmd := exec.Command(bin, "--data", data, "--http", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--nats", "127.0.0.1:0",
		"--firmware-http", "", "--power=false", "--joystick", "", "--foxglove", "127.0.0.1:0", "--record", recDir, "--addr-file", addrFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addrs map[string]string
	bustest.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &addrs)
	})
	tok, _ := os.ReadFile(filepath.Join(data, auth.FileName))
	token := strings.TrimSpace(string(tok))

	d := websocket.Dialer{Subprotocols: []string{"foxglove.websocket.v1"}}
	if _, resp, err := d.Dial("ws://"+addrs["foxglove"]+"/", nil); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Foxglove without the token: %v", err)
	}
	fg, _, err := d.Dial("ws://"+addrs["foxglove"]+"/?token="+token, nil)
	if err != nil {
		t.Fatalf("Foxglove with the token: %v", err)
	}
	var info struct {
		Op           string   `json:"op"`
		Capabilities []string `json:"capabilities"`
	}
	if err := fg.ReadJSON(&info); err != nil || info.Op != "serverInfo" {
		t.Fatalf("serverInfo: %+v %v", info, err)
	}
	fg.Close()

	api := wsclienttest.Dial(t, "ws://"+addrs["ws"]+"/saint", token)
	var status struct {
		Recording bool     `json:"recording"`
		Files     []string `json:"files"`
	}
	if err := api.Call("management", "", "record_status", nil, &status); err != nil || !status.Recording || len(status.Files) != 1 {
		t.Fatalf("record_status: %+v %v", status, err)
	}

	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("saint-server: %v", err)
	}
	sum, err := record.Summarize(status.Files[0])
	if err != nil || !sum.Complete || sum.Messages == 0 {
		t.Fatalf("%s: %+v %v", status.Files[0], sum, err)
	}
	if filepath.Dir(status.Files[0]) != recDir {
		t.Errorf("recorded to %s, want a file in %s", status.Files[0], recDir)
	}
}
