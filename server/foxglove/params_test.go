package foxglove_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/foxglove"
	"github.com/saint-os/saint/server/ws"
)

// fakeParams is a ParamSource of numbers 0 to 10 that a test changes
// behind the server's back, as the web UI would.
type fakeParams struct {
	mu   sync.Mutex
	vals map[string]float64
}

func (f *fakeParams) Params(context.Context) (map[string]json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]json.RawMessage{}
	for n, v := range f.vals {
		out[n], _ = json.Marshal(v)
	}
	return out, nil
}

func (f *fakeParams) SetParam(_ context.Context, name string, value json.RawMessage) error {
	if name == "/fake.panics" {
		panic("a bug in a parameter source")
	}
	var v float64
	if err := json.Unmarshal(value, &v); err != nil {
		return fmt.Errorf("want a number, got %s", value)
	}
	if v < 0 || v > 10 {
		return fmt.Errorf("want 0 to 10, got %v", v)
	}
	f.change(name, v)
	return nil
}

func (f *fakeParams) change(name string, v float64) {
	f.mu.Lock()
	f.vals[name] = v
	f.mu.Unlock()
}

func (f *fakeParams) remove(name string) {
	f.mu.Lock()
	delete(f.vals, name)
	f.mu.Unlock()
}

func newParamServer(t testing.TB, src foxglove.ParamSource, auth tokenAuth) string {
	t.Helper()
	ex := executor.New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = ex.Run(ctx) }()
	b := mem.New()
	o := foxglove.Options{Bus: b, Exec: ex, Auth: auth, TimeInterval: time.Hour, ParamInterval: 20 * time.Millisecond}
	if src != nil {
		o.Params = []foxglove.ParamSource{src}
	}
	srv, err := foxglove.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Shutdown()
		cancel()
		b.Close()
	})
	return addr
}

// paramValues reads until a parameterValues with id ("" for an update)
// and returns it.
func (c *fgClient) paramValues(id string) map[string]any {
	c.t.Helper()
	var out map[string]any
	c.until("parameterValues "+id, func(m map[string]any, _ []byte) bool {
		got, _ := m["id"].(string)
		if m["op"] == "parameterValues" && got == id {
			out = m
			return true
		}
		return false
	})
	return out
}

// params returns a parameterValues' parameters as name → value, a
// parameter without a value as "<unset>".
func params(m map[string]any) map[string]any {
	out := map[string]any{}
	for _, p := range m["parameters"].([]any) {
		p := p.(map[string]any)
		v, ok := p["value"]
		if !ok {
			v = "<unset>"
		}
		out[p["name"].(string)] = v
	}
	return out
}

func TestParameters(t *testing.T) {
	src := &fakeParams{vals: map[string]float64{"/fake.speed": 1, "/fake.gain": 2, "/fake.panics": 0}}
	auth := newTokenAuth("tok")
	c := dial(t, "ws://"+newParamServer(t, src, auth)+"/?token=tok")
	info, _ := c.next()
	caps := info["capabilities"].([]any)
	if !slices.Contains(caps, any("parameters")) || !slices.Contains(caps, any("parametersSubscribe")) {
		t.Fatalf("capabilities %v", caps)
	}

	// Get: all, some, unknown ones (a warning, the known ones answered);
	// without an id the answer has none.
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "all"})
	if got := params(c.paramValues("all")); len(got) != 3 || got["/fake.speed"] != 1.0 || got["/fake.gain"] != 2.0 {
		t.Errorf("all parameters: %v", got)
	}
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{"/fake.gain", "/nope"}})
	c.until("a warning naming /nope", func(m map[string]any, _ []byte) bool {
		return m["op"] == "status" && m["level"] == 1.0 && strings.Contains(m["message"].(string), `"/nope"`)
	})
	if got := params(c.paramValues("")); len(got) != 1 || got["/fake.gain"] != 2.0 {
		t.Errorf("get /fake.gain: %v", got)
	}

	// Set: valid, out of range, unset, a byte array, a panicking source.
	c.send(map[string]any{"op": "setParameters", "id": "s", "parameters": []any{map[string]any{"name": "/fake.speed", "value": 5}}})
	if got := params(c.paramValues("s")); got["/fake.speed"] != 5.0 {
		t.Errorf("after set: %v", got)
	}
	for _, tc := range []struct {
		p    map[string]any
		want string
	}{
		{map[string]any{"name": "/fake.speed", "value": 11}, "setParameters: /fake.speed: want 0 to 10, got 11; not set"},
		{map[string]any{"name": "/fake.speed"}, "/fake.speed: a value is required"},
		{map[string]any{"name": "/fake.speed", "value": "AQI=", "type": "byte_array"}, `/fake.speed: type "byte_array" is not`},
		{map[string]any{"name": "/fake.panics", "value": 1}, "/fake.panics: internal error"},
		{map[string]any{"value": 1}, `parameters[0] has no "name"`},
	} {
		c.send(map[string]any{"op": "setParameters", "id": "bad", "parameters": []any{tc.p}})
		c.expectStatus(tc.want)
		if got := params(c.paramValues("bad")); got["/fake.speed"] != nil && got["/fake.speed"] != 5.0 {
			t.Errorf("refused %v answered %v, want the unchanged 5", tc.p, got)
		}
	}
	c.send(map[string]any{"op": "setParameters", "id": 7, "parameters": []any{map[string]any{"name": "/fake.speed", "value": 1}}})
	c.expectStatus(`setParameters: "id": want a string`)

	// Subscribe to all: changes from elsewhere arrive, a parameter gone
	// arrives without a value, an unsubscribed one does not.
	c.send(map[string]any{"op": "subscribeParameterUpdates", "parameterNames": []string{}})
	c.send(map[string]any{"op": "unsubscribeParameterUpdates", "parameterNames": []string{"/fake.gain"}})
	// The ops run in order: once this is answered, the subscriptions stand.
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{"/fake.gain"}, "id": "sync"})
	c.paramValues("sync")
	src.change("/fake.gain", 3)
	src.change("/fake.speed", 7)
	if got := params(c.paramValues("")); len(got) != 1 || got["/fake.speed"] != 7.0 {
		t.Errorf("update: %v, want only /fake.speed = 7", got)
	}
	src.remove("/fake.speed")
	if got := params(c.paramValues("")); len(got) != 1 || got["/fake.speed"] != "<unset>" {
		t.Errorf("update after removal: %v", got)
	}

	// A client of an old token sets nothing.
	auth.token.Store("new")
	c.send(map[string]any{"op": "setParameters", "id": "old", "parameters": []any{map[string]any{"name": "/fake.gain", "value": 9}}})
	c.expectStatus("token changed")
	if v, _ := src.Params(context.Background()); string(v["/fake.gain"]) != "3" {
		t.Errorf("/fake.gain = %s after a set with an old token", v["/fake.gain"])
	}
}

func TestNoParameters(t *testing.T) {
	c := dial(t, "ws://"+newParamServer(t, nil, newTokenAuth(""))+"/")
	info, _ := c.next()
	if caps := info["capabilities"].([]any); slices.Contains(caps, any("parameters")) {
		t.Errorf("capabilities %v offer parameters without any", caps)
	}
	c.send(map[string]any{"op": "getParameters", "parameterNames": []string{}})
	c.expectStatus(`unsupported op "getParameters": this server offers no parameters`)
}

// FuzzParamMessage sends arbitrary parameter ops: whatever arrives, the
// connection answers the next getParameters, and no value outside what
// the source accepts is stored.
//
//	go test -run '^$' -fuzz FuzzParamMessage -fuzztime 30s ./server/foxglove
func FuzzParamMessage(f *testing.F) {
	f.Add(`{"op":"setParameters","parameters":[{"name":"/fake.speed","value":11}],"id":"x"}`)
	f.Add(`{"op":"setParameters","parameters":[{"name":"/fake.speed","value":"QUJD","type":"byte_array"}]}`)
	f.Add(`{"op":"setParameters","parameters":[{"name":"/fake.speed"}],"id":7}`)
	f.Add(`{"op":"setParameters","parameters":{"name":"/fake.speed"}}`)
	f.Add(`{"op":"getParameters","parameterNames":"/fake.speed"}`)
	f.Add(`{"op":"subscribeParameterUpdates","parameterNames":[null,1]}`)
	f.Add(`{"op":"unsubscribeParameterUpdates"}`)
	src := &fakeParams{vals: map[string]float64{"/fake.speed": 1, "/fake.gain": 2}}
	addr := newParamServer(f, src, newTokenAuth(""))
	f.Fuzz(func(t *testing.T, data string) {
		c := dial(t, "ws://"+addr+"/")
		c.next() // serverInfo
		if err := c.conn.WriteMessage(websocket.TextMessage, []byte(data)); err != nil {
			t.Fatal(err)
		}
		c.send(map[string]any{"op": "getParameters", "parameterNames": []string{"/fake.gain"}, "id": "alive"})
		c.paramValues("alive")
		vals, _ := src.Params(context.Background())
		for n, v := range vals {
			var x float64
			if json.Unmarshal(v, &x) != nil || x < 0 || x > 10 {
				t.Fatalf("%s = %s after %q", n, v, data)
			}
		}
	})
}

// TestCallParams: the sources over WebSocket API calls name their
// parameters, send a setting alone and word the calls' errors.
func TestCallParams(t *testing.T) {
	g := ws.New(ws.Options{})
	var sent []string
	g.Handle("management", "get_settings", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		return map[string]any{"settings": map[string]any{"livelink": map[string]any{"data_port": 54322, "name": "x"}, "rc": map[string]any{"enabled": true}},
			"read_only": []string{"rc"}}, nil
	})
	g.Handle("management", "set_settings", func(_ context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
		sent = append(sent, string(params))
		if strings.Contains(string(params), `"data_port":0`) {
			return nil, ws.ParamError("livelink.data_port", "want a port 1 to 65535, got 0")
		}
		if strings.Contains(string(params), `"name":""`) {
			return nil, ws.ParamError("livelink.other", "cannot be empty while name is")
		}
		return nil, nil
	})
	g.Handle("management", "list_adopted", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		return map[string]any{"nodes": []map[string]any{
			{"node_id": "n2", "role": "head", "display_name": "Second"},
			{"node_id": "n1", "role": "head", "display_name": "First"},
			{"node_id": "n3", "role": "arms", "instance": "left", "display_name": "Left"},
		}}, nil
	})
	g.Handle("management", "set_node_name", func(_ context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
		sent = append(sent, string(params))
		return nil, nil
	})
	ctx := context.Background()
	srcs := foxglove.DefaultParams(g)
	if len(srcs) != 2 {
		t.Fatalf("%d sources, want settings and nodes (the gateway has no blending calls)", len(srcs))
	}
	got := map[string]string{}
	for _, src := range srcs {
		vals, err := src.Params(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for n, v := range vals {
			got[n] = string(v)
		}
	}
	want := map[string]string{"/server.livelink.data_port": "54322", "/server.livelink.name": `"x"`,
		"/head/n1.display_name": `"First"`, "/head/n2.display_name": `"Second"`, "/arms_left.display_name": `"Left"`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parameters %v, want %v", got, want)
	}
	if err := srcs[0].SetParam(ctx, "/server.livelink.data_port", json.RawMessage("54400")); err != nil {
		t.Error(err)
	}
	if err := srcs[0].SetParam(ctx, "/server.livelink.data_port", json.RawMessage("0")); err == nil || err.Error() != "want a port 1 to 65535, got 0" {
		t.Errorf("refused port: %v, want the call's message without the field, which is the parameter", err)
	}
	if err := srcs[0].SetParam(ctx, "/server.livelink.name", json.RawMessage(`""`)); err == nil || err.Error() != "livelink.other: cannot be empty while name is" {
		t.Errorf("refused name: %v, want the other field named", err)
	}
	if err := srcs[1].SetParam(ctx, "/head/n2.display_name", json.RawMessage(`"Rear"`)); err != nil {
		t.Error(err)
	}
	if err := srcs[1].SetParam(ctx, "/head.display_name", json.RawMessage(`"Rear"`)); err == nil {
		t.Error("a name no node has was set")
	}
	wantSent := []string{`{"livelink":{"data_port":54400}}`, `{"livelink":{"data_port":0}}`, `{"livelink":{"name":""}}`, `{"display_name":"Rear","node_id":"n2"}`}
	if !slices.Equal(sent, wantSent) {
		t.Errorf("calls %q, want %q", sent, wantSent)
	}
}
