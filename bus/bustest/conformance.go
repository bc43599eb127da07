package bustest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
)

// NewPair returns two connections to one bus, as two processes would have
// them: messages published on pub reach subscribers on sub and on pub.
// It registers their Close with t.Cleanup.
type NewPair func(t *testing.T) (pub, sub bus.Bus)

// RunConformance runs the behaviour every bus.Bus must have, each case as a
// subtest on a fresh pair. The handlers run on wall-clock executors on
// their own goroutines, so the suite works for networked transports;
// waiting is by polling, never by fixed sleeps (except where a test must
// show that something does not happen in a short window).
func RunConformance(t *testing.T, newPair NewPair) {
	cases := []struct {
		name string
		f    func(t *testing.T, pub, sub bus.Bus)
	}{
		{"PubSubOrderOnExecutor", testPubSubOrder},
		{"MultipleSubscribers", testMultipleSubscribers},
		{"Wildcards", testWildcards},
		{"Unsubscribe", testUnsubscribe},
		{"UnsubscribeInHandler", testUnsubscribeInHandler},
		{"KeepLastDropsOldest", testKeepLast},
		{"ReliableAndBestEffort", testReliability},
		{"ServiceCall", testServiceCall},
		{"ServiceCallAsync", testServiceCallAsync},
		{"ServiceRemoteError", testServiceRemoteError},
		{"ServiceDeferredReply", testServiceDeferredReply},
		{"ServiceReplyOnce", testServiceReplyOnce},
		{"ServiceTimeout", testServiceTimeout},
		{"ServiceNoResponders", testServiceNoResponders},
		{"ServiceCallContext", testServiceCallContext},
		{"ServiceUnserve", testServiceUnserve},
		{"ServiceWildcard", testServiceWildcard},
		{"TypedHelpers", testTyped},
		{"Close", testClose},
		{"CloseFailsPendingCalls", testClosePending},
		{"InvalidNames", testInvalidNames},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pub, sub := newPair(t)
			c.f(t, pub, sub)
		})
	}
}

// wait is how long a test waits for something that should happen promptly.
const wait = 5 * time.Second

func publishInts(t *testing.T, b bus.Bus, topic string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := b.Publish(topic, i); err != nil {
			t.Fatalf("Publish(%s, %d): %v", topic, i, err)
		}
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func subscribe(t *testing.T, b bus.Bus, topic string, qos bus.QoS, ex *executor.Executor, h bus.Handler) bus.Subscription {
	t.Helper()
	s, err := b.Subscribe(topic, qos, ex, h)
	if err != nil {
		t.Fatalf("Subscribe(%s): %v", topic, err)
	}
	return s
}

func serve(t *testing.T, b bus.Bus, service string, ex *executor.Executor, h bus.ServiceHandler) bus.Subscription {
	t.Helper()
	s, err := b.Serve(service, ex, h)
	if err != nil {
		t.Fatalf("Serve(%s): %v", service, err)
	}
	return s
}

// testPubSubOrder: messages arrive complete and in order, and handlers run
// only on the subscriber's executor: with the executor stopped they queue,
// and they run when it starts.
func testPubSubOrder(t *testing.T, pub, sub bus.Bus) {
	const n = 100
	ex := executor.New(nil)
	var rec Recorder
	s := subscribe(t, sub, "/test/order", bus.QoS{Depth: n}, ex, rec.Handler)
	publishInts(t, pub, "/test/order", 0, n)
	WaitReceived(t, s, n)
	if got := rec.Len(); got != 0 {
		t.Fatalf("%d messages handled with the executor stopped, want 0", got)
	}
	StartExecutor(t, ex)
	rec.WaitLen(t, n)
	if got, want := rec.Ints(t), seq(0, n); !slices.Equal(got, want) {
		t.Errorf("received %v, want %v", got, want)
	}
	for _, m := range rec.Msgs() {
		if m.Topic != "/test/order" {
			t.Fatalf("Msg.Topic = %q, want /test/order", m.Topic)
		}
	}
}

func testMultipleSubscribers(t *testing.T, pub, sub bus.Bus) {
	const n = 20
	ex1, ex2 := RunExecutor(t), RunExecutor(t)
	var r1, r2, r3 Recorder
	subscribe(t, sub, "/test/multi", bus.QoS{Depth: n}, ex1, r1.Handler)
	subscribe(t, sub, "/test/multi", bus.QoS{Depth: n}, ex2, r2.Handler)
	subscribe(t, pub, "/test/multi", bus.QoS{Depth: n}, ex1, r3.Handler) // the publisher's own connection
	publishInts(t, pub, "/test/multi", 0, n)
	for i, r := range []*Recorder{&r1, &r2, &r3} {
		r.WaitLen(t, n)
		if got := r.Ints(t); !slices.Equal(got, seq(0, n)) {
			t.Errorf("subscriber %d received %v", i+1, got)
		}
	}
}

func testWildcards(t *testing.T, pub, sub bus.Bus) {
	ex := RunExecutor(t)
	var one, many Recorder
	subscribe(t, sub, "/test/nodes/+/status", bus.QoS{Depth: 100}, ex, one.Handler)
	subscribe(t, sub, "/test/nodes/#", bus.QoS{Depth: 100}, ex, many.Handler)
	topics := []string{
		"/test/nodes/a/status",
		"/test/nodes/a/other",
		"/test/nodes/a/b/status",
		"/test/nodes/b/status",
		"/test/nodesx/c/status",
		"/test/nodes/z/status", // last: when it arrives, the others have
	}
	for i, topic := range topics {
		if err := pub.Publish(topic, i); err != nil {
			t.Fatal(err)
		}
	}
	one.WaitLen(t, 3)
	many.WaitLen(t, 5)
	if got, want := one.Topics(), []string{"/test/nodes/a/status", "/test/nodes/b/status", "/test/nodes/z/status"}; !slices.Equal(got, want) {
		t.Errorf("\"+\" subscriber got %q, want %q", got, want)
	}
	want := []string{"/test/nodes/a/status", "/test/nodes/a/other", "/test/nodes/a/b/status", "/test/nodes/b/status", "/test/nodes/z/status"}
	if got := many.Topics(); !slices.Equal(got, want) {
		t.Errorf("\"#\" subscriber got %q, want %q", got, want)
	}
}

func testUnsubscribe(t *testing.T, pub, sub bus.Bus) {
	ex := RunExecutor(t)
	var rec, sentinel Recorder
	s := subscribe(t, sub, "/test/unsub", bus.QoS{}, ex, rec.Handler)
	subscribe(t, sub, "/test/sentinel", bus.QoS{}, ex, sentinel.Handler)
	publishInts(t, pub, "/test/unsub", 0, 1)
	rec.WaitLen(t, 1)
	if err := s.Unsubscribe(); err != nil {
		t.Fatalf("Unsubscribe: %v", err)
	}
	if err := s.Unsubscribe(); err != nil {
		t.Fatalf("second Unsubscribe: %v", err)
	}
	publishInts(t, pub, "/test/unsub", 1, 5)
	publishInts(t, pub, "/test/sentinel", 0, 1)
	sentinel.WaitLen(t, 1)
	// The sentinel was published after the others and has been handled;
	// run one more round through the executor so that anything queued
	// before it would have run too.
	if err := ex.Do(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
	if got := rec.Ints(t); !slices.Equal(got, []int{0}) {
		t.Errorf("received %v after unsubscribing, want [0]", got)
	}
}

// testUnsubscribeInHandler: a handler that unsubscribes is not called again,
// even for messages already queued.
func testUnsubscribeInHandler(t *testing.T, pub, sub bus.Bus) {
	ex := executor.New(nil)
	var rec Recorder
	var s bus.Subscription
	s = subscribe(t, sub, "/test/unsub_self", bus.QoS{Depth: 10}, ex, func(m bus.Msg) {
		rec.Handler(m)
		if err := s.Unsubscribe(); err != nil {
			t.Errorf("Unsubscribe in handler: %v", err)
		}
	})
	publishInts(t, pub, "/test/unsub_self", 0, 5)
	WaitReceived(t, s, 5)
	StartExecutor(t, ex)
	rec.WaitLen(t, 1)
	if err := ex.Do(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
	if got := rec.Ints(t); !slices.Equal(got, []int{0}) {
		t.Errorf("handler ran for %v, want [0]", got)
	}
}

// testKeepLast: with the executor stopped, depth+k messages leave exactly
// the last depth, in order, and k counted as dropped.
func testKeepLast(t *testing.T, pub, sub bus.Bus) {
	const depth, k = 5, 7
	ex := executor.New(nil)
	var rec Recorder
	s := subscribe(t, sub, "/test/keep_last", bus.QoS{Reliability: bus.BestEffort, Depth: depth}, ex, rec.Handler)
	publishInts(t, pub, "/test/keep_last", 0, depth+k)
	WaitReceived(t, s, depth+k)
	StartExecutor(t, ex)
	rec.WaitLen(t, depth)
	if err := ex.Do(context.Background(), func() {}); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.Ints(t), seq(k, depth+k); !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
	st, _ := bus.SubscriptionStats(s)
	if want := (bus.Stats{Received: depth + k, Dropped: k, Handled: depth}); st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
}

func testReliability(t *testing.T, pub, sub bus.Bus) {
	const n = 50
	ex := RunExecutor(t)
	var rel, be Recorder
	subscribe(t, sub, "/test/qos", bus.QoS{Reliability: bus.Reliable, Depth: n}, ex, rel.Handler)
	subscribe(t, sub, "/test/qos", bus.QoS{Reliability: bus.BestEffort, Depth: n}, ex, be.Handler)
	publishInts(t, pub, "/test/qos", 0, n)
	rel.WaitLen(t, n)
	be.WaitLen(t, n)
	if got := rel.Ints(t); !slices.Equal(got, seq(0, n)) {
		t.Errorf("reliable received %v", got)
	}
	if got := be.Ints(t); !slices.Equal(got, seq(0, n)) {
		t.Errorf("best effort received %v", got)
	}
}

type addReq struct {
	A, B int
}

type addResp struct {
	Sum int `json:"sum"`
}

// serveAdd serves /test/add on its own executor.
func serveAdd(t *testing.T, b bus.Bus) {
	ex := RunExecutor(t)
	serve(t, b, "/test/add", ex, func(req bus.Msg, reply bus.Reply) {
		if req.Topic != "/test/add" {
			reply(nil, fmt.Errorf("request Msg.Topic = %q", req.Topic))
			return
		}
		var r addReq
		if err := req.Decode(&r); err != nil {
			reply(nil, err)
			return
		}
		reply(addResp{Sum: r.A + r.B}, nil)
	})
}

func testServiceCall(t *testing.T, pub, sub bus.Bus) {
	serveAdd(t, sub)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := 0; i < 10; i++ {
		var resp addResp
		if err := pub.Call(ctx, "/test/add", addReq{A: i, B: 40}, &resp); err != nil {
			t.Fatalf("Call: %v", err)
		}
		if resp.Sum != i+40 {
			t.Fatalf("sum = %d, want %d", resp.Sum, i+40)
		}
	}
	// A nil resp discards the answer.
	if err := pub.Call(ctx, "/test/add", addReq{}, nil); err != nil {
		t.Fatalf("Call with nil resp: %v", err)
	}
}

// asyncResult collects the outcomes of CallAsync's done.
type asyncResult struct {
	mu    sync.Mutex
	calls int
	msg   bus.Msg
	err   error
	ex    *executor.Executor
}

func (r *asyncResult) done(m bus.Msg, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.msg, r.err = m, err
}

func (r *asyncResult) wait(t *testing.T) (bus.Msg, error) {
	t.Helper()
	CheckFor(t, wait, time.Millisecond, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.calls == 0 {
			return errors.New("done not called")
		}
		return nil
	})
	// One more round on the executor: a second, wrong, call to done would
	// have been posted by now.
	if r.ex != nil {
		r.ex.Do(context.Background(), func() {})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls != 1 {
		t.Fatalf("done called %d times, want 1", r.calls)
	}
	return r.msg, r.err
}

func callAsync(b bus.Bus, service string, req any, timeout time.Duration, ex *executor.Executor) *asyncResult {
	r := &asyncResult{ex: ex}
	b.CallAsync(service, req, timeout, ex, r.done)
	return r
}

func testServiceCallAsync(t *testing.T, pub, sub bus.Bus) {
	serveAdd(t, sub)
	ex := RunExecutor(t)
	m, err := callAsync(pub, "/test/add", addReq{A: 2, B: 3}, wait, ex).wait(t)
	if err != nil {
		t.Fatalf("CallAsync: %v", err)
	}
	var resp addResp
	if err := m.Decode(&resp); err != nil || resp.Sum != 5 {
		t.Fatalf("response %s: %+v, %v; want sum 5", m.Data, resp, err)
	}
	if m.Topic != "/test/add" {
		t.Errorf("response Msg.Topic = %q, want /test/add", m.Topic)
	}
}

func testServiceRemoteError(t *testing.T, pub, sub bus.Bus) {
	serve(t, sub, "/test/fail", RunExecutor(t), func(req bus.Msg, reply bus.Reply) {
		reply(nil, errors.New("motor driver not responding"))
	})
	check := func(err error) {
		t.Helper()
		var re *bus.RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("error = %v (%T), want *bus.RemoteError", err, err)
		}
		if re.Service != "/test/fail" || re.Message != "motor driver not responding" {
			t.Errorf("RemoteError = %+v", re)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	check(pub.Call(ctx, "/test/fail", nil, nil))
	_, err := callAsync(pub, "/test/fail", nil, wait, RunExecutor(t)).wait(t)
	check(err)
}

// testServiceDeferredReply: a handler may return first and reply later,
// from a timer on its executor or from another goroutine.
func testServiceDeferredReply(t *testing.T, pub, sub bus.Bus) {
	exS := RunExecutor(t)
	serve(t, sub, "/test/later", exS, func(req bus.Msg, reply bus.Reply) {
		exS.After(20*time.Millisecond, func() { reply("from timer", nil) })
	})
	serve(t, sub, "/test/elsewhere", exS, func(req bus.Msg, reply bus.Reply) {
		go reply("from goroutine", nil)
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var s string
	if err := pub.Call(ctx, "/test/later", nil, &s); err != nil || s != "from timer" {
		t.Errorf("Call(/test/later) = %q, %v", s, err)
	}
	m, err := callAsync(pub, "/test/elsewhere", nil, wait, RunExecutor(t)).wait(t)
	if err != nil || string(m.Data) != `"from goroutine"` {
		t.Errorf("CallAsync(/test/elsewhere) = %s, %v", m.Data, err)
	}
}

// testServiceReplyOnce: only a handler's first reply counts.
func testServiceReplyOnce(t *testing.T, pub, sub bus.Bus) {
	serve(t, sub, "/test/twice", RunExecutor(t), func(req bus.Msg, reply bus.Reply) {
		reply(1, nil)
		reply(2, nil)
		reply(nil, errors.New("late"))
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := 0; i < 3; i++ {
		var n int
		if err := pub.Call(ctx, "/test/twice", nil, &n); err != nil || n != 1 {
			t.Fatalf("Call = %d, %v; want 1, nil", n, err)
		}
	}
}

func testServiceTimeout(t *testing.T, pub, sub bus.Bus) {
	var requests atomic.Int32
	s := serve(t, sub, "/test/silent", RunExecutor(t), func(req bus.Msg, reply bus.Reply) {
		requests.Add(1) // and never reply
	})
	const timeout = 50 * time.Millisecond
	ex := RunExecutor(t)
	start := time.Now()
	_, err := callAsync(pub, "/test/silent", nil, timeout, ex).wait(t)
	if !errors.Is(err, bus.ErrTimeout) {
		t.Fatalf("CallAsync error = %v, want ErrTimeout", err)
	}
	if el := time.Since(start); el < timeout {
		t.Errorf("CallAsync timed out after %v, before its %v timeout", el, timeout)
	}
	if !strings.Contains(err.Error(), "/test/silent") {
		t.Errorf("error %q does not name the service", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = pub.Call(ctx, "/test/silent", nil, nil)
	if !errors.Is(err, bus.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call error = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}
	WaitReceived(t, s, 2)
}

func testServiceNoResponders(t *testing.T, pub, sub bus.Bus) {
	// The timeouts are long: the answer must come from the transport
	// knowing nobody serves, not from a timer.
	const long = time.Minute
	start := time.Now()
	_, err := callAsync(pub, "/test/nobody", nil, long, RunExecutor(t)).wait(t)
	if !errors.Is(err, bus.ErrNoResponders) {
		t.Fatalf("CallAsync error = %v, want ErrNoResponders", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	if err := sub.Call(ctx, "/test/nobody", nil, nil); !errors.Is(err, bus.ErrNoResponders) {
		t.Fatalf("Call error = %v, want ErrNoResponders", err)
	}
	// A subscriber to a topic with the service's name is not a server.
	subscribe(t, sub, "/test/nobody", bus.QoS{}, RunExecutor(t), func(bus.Msg) {})
	if err := pub.Call(ctx, "/test/nobody", nil, nil); !errors.Is(err, bus.ErrNoResponders) {
		t.Fatalf("Call with a topic subscriber of that name: error = %v, want ErrNoResponders", err)
	}
	if el := time.Since(start); el > wait {
		t.Errorf("no-responder calls took %v", el)
	}
}

func testServiceCallContext(t *testing.T, pub, sub bus.Bus) {
	s := serve(t, sub, "/test/hang", RunExecutor(t), func(req bus.Msg, reply bus.Reply) {})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the server holds the request (not with t: FailNow
		// belongs to the test goroutine).
		for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if st, _ := bus.SubscriptionStats(s); st.Received > 0 {
				break
			}
		}
		cancel()
	}()
	err := pub.Call(ctx, "/test/hang", nil, nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, bus.ErrTimeout) {
		t.Fatalf("Call error = %v, want context.Canceled", err)
	}
	// An already-expired context fails at once.
	ctx, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	if err := pub.Call(ctx, "/test/hang", nil, nil); !errors.Is(err, bus.ErrTimeout) {
		t.Fatalf("Call with expired ctx: error = %v, want ErrTimeout", err)
	}
}

// testServiceWildcard: one handler serves every name a wildcard service
// matches, and learns from Msg.Topic which name each request was sent to;
// a name it does not match has no responders.
func testServiceWildcard(t *testing.T, pub, sub bus.Bus) {
	ex := RunExecutor(t)
	serve(t, sub, "/test/nodes/+/hello", ex, func(req bus.Msg, reply bus.Reply) { reply(req.Topic, nil) })
	serve(t, sub, "/test/deep/#", ex, func(req bus.Msg, reply bus.Reply) { reply(req.Topic, nil) })
	type named struct {
		Name string `json:"name"`
		Body string `json:"body"`
	}
	if _, err := bus.ServeJSONWithName(sub, "/test/typed/+/echo", ex, func(name string, req string, reply func(named, error)) {
		reply(named{Name: name, Body: req}, nil)
	}); err != nil {
		t.Fatalf("ServeJSONWithName: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, name := range []string{"/test/nodes/n1/hello", "/test/nodes/pi-a1b2/hello", "/test/deep/a", "/test/deep/a/b/c"} {
		var got string
		if err := pub.Call(ctx, name, nil, &got); err != nil || got != name {
			t.Errorf("Call(%s) answered %q, %v; want the name it was sent to", name, got, err)
		}
		m, err := callAsync(pub, name, nil, wait, RunExecutor(t)).wait(t)
		if err != nil || string(m.Data) != fmt.Sprintf("%q", name) {
			t.Errorf("CallAsync(%s) answered %s, %v", name, m.Data, err)
		}
	}
	got, err := bus.CallJSON[named](ctx, pub, "/test/typed/n7/echo", "hi")
	if err != nil || got != (named{Name: "/test/typed/n7/echo", Body: "hi"}) {
		t.Errorf("typed wildcard service answered %+v, %v", got, err)
	}
	for _, name := range []string{"/test/nodes/n1/bye", "/test/nodes/n1/hello/more", "/test/deep"} {
		if err := pub.Call(ctx, name, nil, nil); !errors.Is(err, bus.ErrNoResponders) {
			t.Errorf("Call(%s) = %v, want ErrNoResponders", name, err)
		}
	}
}

func testServiceUnserve(t *testing.T, pub, sub bus.Bus) {
	s := serve(t, sub, "/test/gone", RunExecutor(t), func(req bus.Msg, reply bus.Reply) { reply(true, nil) })
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := pub.Call(ctx, "/test/gone", nil, nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if err := s.Unsubscribe(); err != nil {
		t.Fatalf("Unsubscribe: %v", err)
	}
	CheckFor(t, wait, time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := pub.Call(ctx, "/test/gone", nil, nil)
		if !errors.Is(err, bus.ErrNoResponders) {
			return fmt.Errorf("call after Unsubscribe: %v, want ErrNoResponders", err)
		}
		return nil
	})
}

type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

func testTyped(t *testing.T, pub, sub bus.Bus) {
	ex := RunExecutor(t)
	var mu sync.Mutex
	var got []point
	s, err := bus.SubscribeJSON(sub, "/test/typed", bus.QoS{}, ex, func(topic string, p point) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	pub.Publish("/test/typed", point{1, 2})
	pub.Publish("/test/typed", "not a point")
	pub.Publish("/test/typed", point{3, 4})
	CheckFor(t, wait, time.Millisecond, func() error {
		st, _ := bus.SubscriptionStats(s)
		if st.Handled != 3 {
			return fmt.Errorf("stats %+v", st)
		}
		return nil
	})
	mu.Lock()
	if want := []point{{1, 2}, {3, 4}}; !slices.Equal(got, want) {
		t.Errorf("SubscribeJSON got %v, want %v", got, want)
	}
	mu.Unlock()
	if st, _ := bus.SubscriptionStats(s); st.DecodeErrors != 1 {
		t.Errorf("DecodeErrors = %d, want 1", st.DecodeErrors)
	}

	// SubscribeValues: whatever form a message arrives in, its encoding is
	// the published value's JSON.
	var vals []string
	vs, err := bus.SubscribeValues(sub, "/test/values", bus.QoS{}, ex, func(topic string, v any) {
		data, err := json.Marshal(v)
		mu.Lock()
		vals = append(vals, fmt.Sprintf("%s %s %v", topic, data, err))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	pub.Publish("/test/values", point{5, 6})
	pub.Publish("/test/values", map[string]any{"t": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	CheckFor(t, wait, time.Millisecond, func() error {
		if st, _ := bus.SubscriptionStats(vs); st.Handled != 2 {
			return fmt.Errorf("stats %+v", st)
		}
		return nil
	})
	mu.Lock()
	if want := []string{`/test/values {"x":5,"y":6} <nil>`, `/test/values {"t":"2026-01-02T03:04:05Z"} <nil>`}; !slices.Equal(vals, want) {
		t.Errorf("SubscribeValues got %q, want %q", vals, want)
	}
	mu.Unlock()

	_, err = bus.ServeJSON(sub, "/test/typed_add", ex, func(req addReq, reply func(addResp, error)) {
		if req.A < 0 {
			reply(addResp{}, errors.New("negative"))
			return
		}
		reply(addResp{Sum: req.A + req.B}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	resp, err := bus.CallJSON[addResp](ctx, pub, "/test/typed_add", addReq{A: 1, B: 2})
	if err != nil || resp.Sum != 3 {
		t.Errorf("CallJSON = %+v, %v", resp, err)
	}
	var re *bus.RemoteError
	if _, err := bus.CallJSON[addResp](ctx, pub, "/test/typed_add", addReq{A: -1}); !errors.As(err, &re) || re.Message != "negative" {
		t.Errorf("CallJSON error = %v, want RemoteError negative", err)
	}
	if _, err := bus.CallJSON[addResp](ctx, pub, "/test/typed_add", "garbage"); !errors.As(err, &re) {
		t.Errorf("CallJSON with undecodable request: error = %v, want RemoteError", err)
	}

	exC := RunExecutor(t)
	type outcome struct {
		resp addResp
		err  error
	}
	ch := make(chan outcome, 2)
	bus.CallAsyncJSON(pub, "/test/typed_add", addReq{A: 5, B: 6}, wait, exC, func(r addResp, err error) { ch <- outcome{r, err} })
	select {
	case o := <-ch:
		if o.err != nil || o.resp.Sum != 11 {
			t.Errorf("CallAsyncJSON = %+v, %v", o.resp, o.err)
		}
	case <-time.After(wait):
		t.Fatal("CallAsyncJSON: done not called")
	}
}

func testClose(t *testing.T, pub, sub bus.Bus) {
	ex := RunExecutor(t)
	if err := pub.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := pub.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := pub.Publish("/test/closed", 1); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Publish after Close: %v", err)
	}
	if _, err := pub.Subscribe("/test/closed", bus.QoS{}, ex, func(bus.Msg) {}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Subscribe after Close: %v", err)
	}
	if _, err := pub.Serve("/test/closed", ex, func(bus.Msg, bus.Reply) {}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Serve after Close: %v", err)
	}
	if err := pub.Call(context.Background(), "/test/closed", nil, nil); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Call after Close: %v", err)
	}
	if _, err := callAsync(pub, "/test/closed", nil, wait, ex).wait(t); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("CallAsync after Close: %v", err)
	}

	// Closing ends the connection's subscriptions and services: the other
	// connection can no longer reach them.
	serve(t, sub, "/test/closing", ex, func(req bus.Msg, reply bus.Reply) { reply(true, nil) })
	s := subscribe(t, sub, "/test/closing", bus.QoS{}, ex, func(bus.Msg) {})
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Unsubscribe(); err != nil {
		t.Errorf("Unsubscribe after Close: %v", err)
	}
}

// testClosePending: a call in flight when its connection closes ends with
// ErrClosed, not with a timeout.
func testClosePending(t *testing.T, pub, sub bus.Bus) {
	s := serve(t, sub, "/test/pending", RunExecutor(t), func(req bus.Msg, reply bus.Reply) {})
	r := callAsync(pub, "/test/pending", nil, time.Minute, RunExecutor(t))
	errc := make(chan error, 1)
	go func() { errc <- pub.Call(context.Background(), "/test/pending", nil, nil) }()
	WaitReceived(t, s, 2)
	pub.Close()
	if _, err := r.wait(t); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("CallAsync in flight at Close: %v, want ErrClosed", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, bus.ErrClosed) {
			t.Errorf("Call in flight at Close: %v, want ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatal("Call in flight at Close did not return")
	}
}

func testInvalidNames(t *testing.T, pub, sub bus.Bus) {
	ex := RunExecutor(t)
	bad := []string{
		"",
		"/",
		"saint/head/cmd",
		"/saint/head.cmd",
		"/saint/head cmd",
		"/saint//cmd",
		"/saint/head/",
		"/saint/*/cmd",
		"/saint/>",
		"/_srv/x",
		"/saint/héad",
	}
	badFilters := slices.Concat(bad, []string{"/+/status", "/#", "/saint/#/cmd", "/saint/a+/b"})
	goodFilters := []string{"/saint/+/status", "/saint/#"} // a service may be served with wildcards, not called
	badNames := slices.Concat(bad, goodFilters)

	check := func(what, name string, err error) {
		t.Helper()
		if !errors.Is(err, bus.ErrInvalidName) {
			t.Errorf("%s(%q) error = %v, want ErrInvalidName", what, name, err)
			return
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("%s(%q) error %q does not name the topic", what, name, err)
		}
	}
	for _, name := range badNames {
		check("Publish", name, pub.Publish(name, 1))
		if !slices.Contains(goodFilters, name) {
			_, err := sub.Serve(name, ex, func(bus.Msg, bus.Reply) {})
			check("Serve", name, err)
		}
		check("Call", name, pub.Call(context.Background(), name, nil, nil))
		_, err := callAsync(pub, name, nil, wait, ex).wait(t)
		check("CallAsync", name, err)
	}
	for _, name := range badFilters {
		_, err := sub.Subscribe(name, bus.QoS{}, ex, func(bus.Msg) {})
		check("Subscribe", name, err)
		_, err = sub.Serve(name, ex, func(bus.Msg, bus.Reply) {})
		check("Serve", name, err)
	}
	// And the good ones SAINT.OS uses.
	for _, name := range []string{"/saint/nodes/+/status", "/saint/node/pi-a1b2c3d4/adopt", "/robot_1/saint/#"} {
		if _, err := sub.Subscribe(name, bus.QoS{}, ex, func(bus.Msg) {}); err != nil {
			t.Errorf("Subscribe(%q): %v", name, err)
		}
	}
}
