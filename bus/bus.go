package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// Reliability is the delivery guarantee a subscriber asks for, as in ROS 2.
type Reliability int

const (
	// Reliable delivers every message in order as long as the subscriber's
	// keep-last queue does not overflow; it is the default.
	Reliable Reliability = iota
	// BestEffort may drop messages under load (sensor streams, camera frames).
	BestEffort
)

// String returns "reliable" or "best_effort".
func (r Reliability) String() string {
	if r == BestEffort {
		return "best_effort"
	}
	return "reliable"
}

// DefaultDepth is the keep-last depth used when QoS.Depth is 0.
const DefaultDepth = 10

// QoS is a subscription's quality of service: reliability and a keep-last
// queue depth. When more messages arrive than the subscriber's executor has
// handled, the oldest are dropped so that at most Depth wait.
// The zero value is reliable with DefaultDepth.
type QoS struct {
	Reliability Reliability
	Depth       int

	// typ is the type SubscribeJSON decodes into: on an in-process
	// transport the subscription then takes copies of values of that type
	// rather than their JSON.
	typ reflect.Type
	// types are the types SubscribeValuesOf takes as copies (typ is then
	// typesMarker).
	types []reflect.Type
	// wants, when set, is SubscribeValuesOfWanted's filter.
	wants func(topic string) bool
}

// Msg is a message as a subscriber or service receives it: the topic (or
// service) name it arrived on, in slash form, and its JSON body.
//
// A message published in process (bus/mem) to a subscriber made by
// SubscribeJSON for the published value's own type carries a copy of the
// value instead, and Data is nil: a Bus wrapper between SubscribeJSON and
// the Conn must pass the Msg on as it is.
type Msg struct {
	Topic string
	Data  []byte

	val any // *T, a copy of the published value, for SubscribeJSON[T]
}

// Value returns the copy of the published value a subscription made by
// SubscribeValuesOf got in process (a pointer to it), or nil when the
// message came as JSON (Data).
func (m Msg) Value() any { return m.val }

// Decode unmarshals the message's JSON body into v.
func (m Msg) Decode(v any) error {
	if err := json.Unmarshal(m.Data, v); err != nil {
		return fmt.Errorf("bus: decoding %s: %w", m.Topic, err)
	}
	return nil
}

// Handler handles a message on the subscriber's executor.
type Handler func(Msg)

// Reply answers a service request. Call it exactly once, from any goroutine:
// with the response value (JSON-encodable) and a nil error, or with a nil
// value and an error whose text becomes the caller's *RemoteError.
type Reply func(resp any, err error)

// ServiceHandler handles a service request on the server's executor. It may
// reply before returning or later (after its own calls complete).
type ServiceHandler func(req Msg, reply Reply)

// Subscription is a subscription or a served service; Unsubscribe ends it.
type Subscription interface {
	Unsubscribe() error
}

// Bus is the topics-and-services transport every SAINT.OS process talks
// through. Topic and service names are those of bus/msg, in slash form
// ("/saint/nodes/unadopted", "/saint/node/{node_id}/adopt"); subscriptions
// and served services may use "+" for one name segment
// ("/saint/nodes/+/status"), a final "#" for one or more. Payloads are
// JSON, the same shapes the WebSocket API shows.
//
// Handlers run on the executor given at subscription time, one at a time;
// Publish and the call methods may be used from any goroutine.
type Bus interface {
	// Publish sends v (JSON-encodable) to every subscriber of topic.
	Publish(topic string, v any) error
	// Subscribe delivers topic's messages to h on ex.
	Subscribe(topic string, qos QoS, ex *executor.Executor, h Handler) (Subscription, error)
	// Serve answers requests to service with h, run on ex. service may
	// have wildcards like a subscription ("/saint/nodes/+/validate_role");
	// each request's Msg.Topic is then the name it was sent to.
	Serve(service string, ex *executor.Executor, h ServiceHandler) (Subscription, error)
	// Call sends req to service and decodes the response into resp (which
	// may be nil), waiting until the answer, ctx's end, or ctx's deadline.
	// It blocks, so it is for goroutines at the edges, never for callbacks.
	Call(ctx context.Context, service string, req, resp any) error
	// CallAsync sends req to service and runs done on ex with the response
	// or an error. The timeout is measured on ex's clock, so under a virtual
	// clock it is deterministic.
	CallAsync(service string, req any, timeout time.Duration, ex *executor.Executor, done func(Msg, error))
	// Close ends every subscription and releases the transport.
	Close() error
}

var (
	// ErrNoResponders is returned by calls to a service nobody serves.
	ErrNoResponders = errors.New("bus: no responders")
	// ErrTimeout is returned by calls that got no answer in time.
	ErrTimeout = errors.New("bus: timeout")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("bus: closed")
)

// RemoteError is a service handler's error, carried back to the caller.
type RemoteError struct {
	Service string
	Message string
}

func (e *RemoteError) Error() string { return e.Service + ": " + e.Message }
