package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/server"
)

// FuzzRequests sends arbitrary frames to a running server with every
// handler installed: each gets a response (or, for a regenerated token, a
// close), and the server keeps answering.
func FuzzRequests(f *testing.F) {
	for _, seed := range []string{
		`{"type": "rc", "action": "get_status", "params": {}}`,
		`{"type": "rc", "action": "set_channel_config", "params": {"channel": 1, "name": "steering", "min": 1000, "max": 2000, "center": 1500, "reversed": false}}`,
		`{"type": "rc", "action": "calibrate_channel", "params": {"channel": 3, "position": "center"}}`,
		`{"id": "uuid-string", "type": "command", "target": "head", "action": "move", "params": {"pan": 45.0, "tilt": -15.0, "speed": 0.5}}`,
		`{"type": "command", "target": "system", "action": "reboot", "params": {"node": "x"}}`,
		`{"type": "management", "action": "get_activity_log", "params": {"limit": 100, "offset": 0, "level": "INFO", "source": null}}`,
		`{"type": "management", "action": "set_settings", "params": {"livelink": {"data_port": 1}}}`,
		`{"type": "router", "action": "set_route", "params": {"route": {"id": "r", "input": {"source": "rc"}, "output": {"target": "head"}, "mapping": "passthrough"}}}`,
		`{"type": "subscribe", "topics": ["head", "arms", "tracks"], "rate_hz": 10}`,
		`{"type": "auth", "token": "x", "client_id": "c"}`,
		`{"id":[1,{"a":null}],"type":"management","action":"get_node_info","params":"x"}`,
		`not json`,
	} {
		f.Add([]byte(seed))
	}
	broker := mem.NewBroker()
	r := newRobotWith(f, func(string) bus.Bus { return broker.Connect(nil) }, nil, func(o *server.Options) {
		o.Power = &fakePower{}
		o.Gateway.RatePerSecond = 1e6
	})
	var conn *websocket.Conn
	dial := func(t *testing.T) {
		c, _, err := websocket.DefaultDialer.Dial(r.wsURL(), http.Header{"Authorization": {"Bearer " + r.srv.Token()}})
		if err != nil {
			t.Fatalf("the server stopped accepting connections: %v", err)
		}
		conn = c
	}
	f.Cleanup(func() {
		if conn != nil {
			conn.Close()
		}
	})
	f.Fuzz(func(t *testing.T, frame []byte) {
		if conn == nil {
			dial(t)
		}
		if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
			conn.Close()
			conn = nil
			return
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				// Only a close frame is an acceptable end (token
				// regenerated, message too big); a timeout means no
				// answer.
				if _, ok := err.(*websocket.CloseError); !ok {
					t.Fatalf("frame %q: %v", frame, err)
				}
				conn.Close()
				conn = nil
				return
			}
			var m struct{ Type string }
			if json.Unmarshal(data, &m) == nil && m.Type == "response" {
				return
			}
		}
	})
}
