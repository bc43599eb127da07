package foxglove_test

import (
	"testing"

	"github.com/gorilla/websocket"
)

// FuzzClientMessage sends arbitrary text and binary messages: whatever
// arrives, the server answers and the connection survives (a following
// bad subscription still gets its status), and no command runs unless a
// valid one was sent.
//
//	go test -run '^$' -fuzz FuzzClientMessage -fuzztime 30s ./server/foxglove
func FuzzClientMessage(f *testing.F) {
	f.Add([]byte(`{"op":"subscribe","subscriptions":[{"id":1}]}`), false)
	f.Add([]byte(`{"op":"advertise","channels":[{"id":1,"topic":"/saint/command/head/move","encoding":"json"}]}`), false)
	f.Add([]byte(`{"op":"unsubscribe","subscriptionIds":"x"}`), false)
	f.Add([]byte(`{"op":7}`), false)
	f.Add([]byte{1, 1, 0, 0, 0, '{', '}'}, true)
	f.Add([]byte{2, 1, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, true)
	f.Add([]byte{2}, true)
	f.Add([]byte{}, true)
	fx := newFixture(f, "")
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		c := dial(t, "ws://"+fx.addr+"/")
		c.next() // serverInfo
		typ := websocket.TextMessage
		if binary {
			typ = websocket.BinaryMessage
		}
		if err := c.conn.WriteMessage(typ, data); err != nil {
			t.Fatal(err)
		}
		c.send(map[string]any{"op": "subscribe", "subscriptions": []any{map[string]any{"id": 99, "channelId": 4000000}}})
		c.until("the connection to answer after the fuzzed message", func(m map[string]any, _ []byte) bool {
			msg, _ := m["message"].(string)
			return m["op"] == "status" && msg == "subscribe: unknown channel id 4000000"
		})
		if n := fx.moveCount(); n != 0 {
			t.Fatalf("a fuzzed message moved the head (%d moves)", n)
		}
	})
}
