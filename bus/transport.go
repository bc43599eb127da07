package bus

import (
	"errors"
	"time"
)

// DeliverFunc receives a message from a Transport: the concrete subject it
// was published on, the reply subject (empty unless it is a request) and
// the payload. Transports may call it on any goroutine, but calls for one
// subscription must not overlap and must keep the transport's order.
// The receiver keeps data, so the transport must not reuse it.
type DeliverFunc func(subject, reply string, data []byte)

// Transport moves raw bytes between subjects. It is the part of a bus that
// differs between backends; Conn builds the Bus on top of it (names,
// encoding, keep-last queues, executors, service envelopes, timeouts), so a
// backend is a few hundred lines and every backend behaves the same.
//
// Subjects are NATS-style: tokens separated by '.', where in a subscription
// "*" matches one token and a final ">" matches one or more. Conn only ever
// passes subjects made by TopicSubject and ServiceSubject, and reply
// subjects the transport itself made in Request.
//
// All methods are safe for concurrent use.
type Transport interface {
	// Publish sends data to every subscription matching subject. A non-empty
	// reply is a subject the receiver can answer on.
	Publish(subject, reply string, data []byte) error

	// Subscribe calls deliver for every message published to a subject
	// matching the pattern, until the subscription is unsubscribed. When
	// Subscribe returns, the subscription should be in effect as far as the
	// transport can tell (a networked transport round-trips to its server),
	// so that a publication that follows it is delivered.
	Subscribe(pattern string, deliver DeliverFunc) (Subscription, error)

	// Request publishes data to subject with a fresh reply subject and calls
	// done once, on any goroutine, with the first reply's data, or with
	// ErrNoResponders as soon as the transport knows nobody subscribes to
	// subject. cancel forgets the request; after it returns done is not
	// called. The caller measures timeouts itself (on its executor's clock)
	// and cancels; timeout is a hint for transports that must bound a
	// request on their own, and may be 0 for "none given".
	// If Request returns an error, done is never called.
	Request(subject string, data []byte, timeout time.Duration, done func(data []byte, err error)) (cancel func(), err error)

	// Close ends every subscription and pending request of this transport.
	Close() error
}

// ServiceTransport is a Transport that keeps a served service apart from
// everything else: its requests arrive and its replies leave through
// SubscribeService and Reply, which a networked transport may run on a
// connection of their own whose only right is to answer (natsbus does,
// for saint-server). Conn uses them when its transport has them.
type ServiceTransport interface {
	Transport
	// SubscribeService is Subscribe for the requests of a served service.
	SubscribeService(pattern string, deliver DeliverFunc) (Subscription, error)
	// Reply sends a service's answer to the reply subject a request
	// came with. A transport refuses a reply subject that cannot be a
	// requester's own reply subject (a topic that a request named as
	// its reply) with an error wrapping ErrReplyRefused, counting and
	// reporting such refusals itself.
	Reply(subject string, data []byte) error
}

// ErrReplyRefused is a ServiceTransport's error for a reply subject that
// is not a reply subject: a request naming a topic as where its answer
// should go, to have the service publish there for it.
var ErrReplyRefused = errors.New("bus: reply subject refused")
