package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// SubscribeJSON subscribes h to topic with each message decoded into a
// fresh T. On an in-process bus (bus/mem) a value published as a T reaches
// h as a deep copy, without JSON: the same T that decoding its encoding
// would give (types JSON treats specially, such as time.Time, still go
// through JSON). A message that does not decode is not passed to h: it is counted
// (Stats().DecodeErrors on the returned Subscription) and logged, the first
// time and then at each power of two, so a misbehaving publisher on a
// 1 kHz topic cannot flood the log.
func SubscribeJSON[T any](b Bus, topic string, qos QoS, ex *executor.Executor, h func(topic string, v T)) (Subscription, error) {
	return subscribeDecoded(b, topic, qos, ex, json.Unmarshal, h)
}

// SubscribeStrictJSON is SubscribeJSON for a topic whose subscriber acts
// on what it receives, such as a role's command topics: a message is a T
// only if it has T's shape. For a struct, that is a JSON object with no
// field T does not have (at any depth) and every field whose tag does not
// say omitempty or omitzero; anything else (a service's reply envelope
// {"result": …}, null, an object meant for another topic) is refused,
// counted and logged as a message that does not decode, never read as
// T's zero value. Values published in process as a T are T's.
func SubscribeStrictJSON[T any](b Bus, topic string, qos QoS, ex *executor.Executor, h func(topic string, v T)) (Subscription, error) {
	return subscribeDecoded(b, topic, qos, ex, newStrictDecoder(reflect.TypeFor[T]()).decode, h)
}

func subscribeDecoded[T any](b Bus, topic string, qos QoS, ex *executor.Executor, decode func([]byte, any) error, h func(topic string, v T)) (Subscription, error) {
	js := &jsonSubscription{log: loggerOf(b)}
	qos.typ = reflect.TypeFor[T]()
	sub, err := b.Subscribe(topic, qos, ex, func(m Msg) {
		if p, ok := m.val.(*T); ok {
			// In process: a copy of the published value, no JSON.
			h(m.Topic, *p)
			return
		}
		var v T
		if err := decode(m.Data, &v); err != nil {
			js.decodeError(m.Topic, fmt.Sprintf("%T", v), err)
			return
		}
		h(m.Topic, v)
	})
	if err != nil {
		return nil, err
	}
	js.Subscription = sub
	return js, nil
}

// SubscribeValues subscribes h to topic with each message as a value to
// encode, for a handler that passes messages on as JSON (to WebSocket
// clients, say) and may never need to: on the wire the message's JSON as a
// json.RawMessage; in process (bus/mem) a pointer to a deep copy of the
// published value, whose encoding is that JSON, so nothing is encoded
// unless h encodes it. Types JSON treats specially still arrive as JSON.
func SubscribeValues(b Bus, topic string, qos QoS, ex *executor.Executor, h func(topic string, v any)) (Subscription, error) {
	qos.typ = reflect.TypeFor[valuesMarker]()
	return b.Subscribe(topic, qos, ex, func(m Msg) {
		if m.val != nil {
			h(m.Topic, m.val)
			return
		}
		h(m.Topic, json.RawMessage(m.Data))
	})
}

// valuesMarker marks a SubscribeValues subscription in QoS.typ.
type valuesMarker struct{}

// SubscribeValuesOf is Subscribe for a handler that passes most messages
// on as JSON but reads some types itself, such as camera frames, whose
// JSON (base64 pixels) costs milliseconds to make and to read: on an
// in-process bus (bus/mem) a message published as a value of one of
// types reaches h with a pointer to a deep copy of it in Msg.Value and
// no Data, so the publisher encodes nothing for this subscription; every
// other message, and every one from the wire, arrives as JSON in Data as
// with Subscribe. Types JSON treats specially still arrive as JSON.
func SubscribeValuesOf(b Bus, topic string, qos QoS, ex *executor.Executor, h Handler, types ...reflect.Type) (Subscription, error) {
	qos.typ, qos.types = reflect.TypeFor[typesMarker](), types
	return b.Subscribe(topic, qos, ex, h)
}

// SubscribeValuesOfWanted is SubscribeValuesOf for a subscriber that
// wants a topic's messages only at times, such as camera frames only
// while a client of its own watches them: wants is called with each
// message's topic on the publisher's goroutine before anything is
// copied, encoded or queued for this subscription, and a message it
// returns false for is dropped there (not counted as received). It must
// be cheap and safe for concurrent use (an atomic load); it applies to
// messages from the wire too.
func SubscribeValuesOfWanted(b Bus, topic string, qos QoS, ex *executor.Executor, h Handler, wants func(topic string) bool, types ...reflect.Type) (Subscription, error) {
	qos.wants = wants
	return SubscribeValuesOf(b, topic, qos, ex, h, types...)
}

// typesMarker marks a SubscribeValuesOf subscription in QoS.typ.
type typesMarker struct{}

// ServeJSON serves service with requests decoded into Req and h's response
// sent as Resp. A request that does not decode is answered with an error
// (the caller gets a *RemoteError) without calling h. As with Serve, reply
// may be called once from any goroutine, now or later.
func ServeJSON[Req, Resp any](b Bus, service string, ex *executor.Executor, h func(req Req, reply func(Resp, error))) (Subscription, error) {
	return ServeJSONWithName(b, service, ex, func(_ string, req Req, reply func(Resp, error)) { h(req, reply) })
}

// ServeJSONWithName is ServeJSON for a service name with wildcards
// ("/saint/nodes/+/validate_role"): h is also given the name each request
// was sent to ("/saint/nodes/n1/validate_role"). On a bus whose
// permissions let each client call only names carrying its own id, that
// name, unlike anything in the request, says who may have sent it.
func ServeJSONWithName[Req, Resp any](b Bus, service string, ex *executor.Executor, h func(name string, req Req, reply func(Resp, error))) (Subscription, error) {
	js := &jsonSubscription{log: loggerOf(b)}
	sub, err := b.Serve(service, ex, func(m Msg, reply Reply) {
		var req Req
		if err := json.Unmarshal(m.Data, &req); err != nil {
			js.decodeErrors.Add(1)
			reply(nil, fmt.Errorf("bus: decoding request as %T: %v", req, err))
			return
		}
		h(m.Topic, req, func(resp Resp, err error) {
			if err != nil {
				reply(nil, err)
				return
			}
			reply(resp, nil)
		})
	})
	if err != nil {
		return nil, err
	}
	js.Subscription = sub
	return js, nil
}

// CallJSON calls service with req and returns the response decoded into a
// Resp. It blocks like Bus.Call, so it is for goroutines at the edges.
func CallJSON[Resp any](ctx context.Context, b Bus, service string, req any) (Resp, error) {
	var resp Resp
	err := b.Call(ctx, service, req, &resp)
	return resp, err
}

// CallAsyncJSON is Bus.CallAsync with the response decoded into a Resp.
// done runs on ex exactly once; a response that does not decode is
// reported as an error.
func CallAsyncJSON[Resp any](b Bus, service string, req any, timeout time.Duration, ex *executor.Executor, done func(Resp, error)) {
	b.CallAsync(service, req, timeout, ex, func(m Msg, err error) {
		var resp Resp
		if err == nil {
			err = m.Decode(&resp)
		}
		done(resp, err)
	})
}

// jsonSubscription adds a decode-error count to a subscription.
type jsonSubscription struct {
	Subscription
	log          *slog.Logger
	decodeErrors atomic.Uint64
}

// Stats implements StatsReporter.
func (s *jsonSubscription) Stats() Stats {
	st, _ := SubscriptionStats(s.Subscription)
	st.DecodeErrors = s.decodeErrors.Load()
	return st
}

func (s *jsonSubscription) decodeError(topic, typ string, err error) {
	n := s.decodeErrors.Add(1)
	if n&(n-1) == 0 {
		s.log.Warn("bus: ignoring message that does not decode", "topic", topic, "type", typ, "count", n, "err", err)
	}
}

// loggerOf returns b's logger if it has one (a *Conn does).
func loggerOf(b Bus) *slog.Logger {
	if l, ok := b.(interface{ Logger() *slog.Logger }); ok {
		return l.Logger()
	}
	return slog.Default()
}
