package natsbus

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus"
)

// DefaultReconnectWait is how long a client waits between reconnect
// attempts when Options.ReconnectWait is 0. It is short because a node
// whose server restarts should be back within a control period or two.
const DefaultReconnectWait = 100 * time.Millisecond

// flushTimeout bounds the round trip Subscribe and Close make to the server.
const flushTimeout = 2 * time.Second

// Options configures a client connection. A nil *Options means the zero
// value, which is ready to use.
type Options struct {
	// Name identifies the client in the server's monitoring ("node pi-a1b2").
	Name string
	// ReconnectWait is the pause between reconnect attempts after the
	// first, which is made at once; 0 means DefaultReconnectWait.
	// Reconnection never gives up.
	ReconnectWait time.Duration
	// RetryConnect makes Connect succeed even when no server answers yet,
	// and keep trying in the background: for a node that boots before the
	// server. Publications made meanwhile are buffered. Without it Connect
	// fails if the first attempt does.
	RetryConnect bool
	// Key is the client's nkey identity: it signs the server's nonce at
	// every (re)connection. Nil connects without credentials, which only a
	// broker without authentication accepts.
	Key nkeys.KeyPair
	// TLS, when set, makes the connection use TLS with this configuration
	// (TrustCA, TrustOnFirstUse).
	TLS *tls.Config
	// InboxPrefix is where replies to this client's requests come; ""
	// means NATS's "_INBOX". A node uses NodeInboxPrefix, the one subject
	// tree of replies its permissions let it read. It must be under
	// "_INBOX.": services answer nowhere else.
	InboxPrefix string
	// ServiceName, when set, makes the services this client serves
	// receive their requests and send their replies on a second
	// connection of that name (saint-server's is ServerServicesName),
	// which the broker lets publish to inboxes only: whatever a request
	// names as its reply subject, the answer cannot land on a topic.
	ServiceName string
	// Bus configures the bus side (logger, service depth). Its Logger also
	// receives connection events (disconnected, reconnected).
	Bus bus.Options
}

// Conn is a bus.Bus over a NATS connection.
type Conn struct {
	*bus.Conn
	nc *nats.Conn
	tr *transport
}

// Connect connects to the NATS server at url (e.g. Server.ClientURL(), or a
// comma-separated list of servers) and returns a Bus on it.
func Connect(url string, opts *Options) (*Conn, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ReconnectWait <= 0 {
		o.ReconnectWait = DefaultReconnectWait
	}
	log := o.Bus.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "natsbus", "url", url)
	if o.InboxPrefix != "" && !strings.HasPrefix(o.InboxPrefix+".", replyPrefix) {
		return nil, fmt.Errorf("natsbus: Options.InboxPrefix %q: want it under %q", o.InboxPrefix, replyPrefix)
	}
	t := &transport{log: log, pending: make(map[string]func([]byte, error)), refusals: newRefusals(log, refusalWindow)}
	nc, err := dial(url, o.Name, &o, log, nil)
	if err != nil {
		return nil, err
	}
	t.nc, t.svc = nc, nc
	if o.ServiceName != "" {
		// The broker reports a reply it refused on this connection
		// (a permission violation): counted with the transport's own
		// refusals, never logged one by one.
		svc, err := dial(url, o.ServiceName, &o, log, t.refusals.brokerError)
		if err != nil {
			nc.Close()
			return nil, err
		}
		t.svc = svc
	}
	return &Conn{Conn: bus.NewConn(t, &o.Bus), nc: nc, tr: t}, nil
}

// dial makes one NATS connection named name with o's key, TLS, inbox and
// reconnection. onPermission, when set, takes the publish permission
// violations the server reports instead of the log.
func dial(url, name string, o *Options, log *slog.Logger, onPermission func(error)) (*nats.Conn, error) {
	copts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		// The first attempt is at once (a server that closed the connection
		// to apply new permissions, at adoption, is there), then one every
		// ReconnectWait. nats.go would otherwise wait before the first
		// attempt and add up to 1 s of random delay with TLS, made for
		// thousands of clients; a robot has a handful.
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			if attempts <= 1 {
				return 0
			}
			return o.ReconnectWait
		}),
		nats.RetryOnFailedConnect(o.RetryConnect),
		// A pulled cable must be noticed in seconds, not after the default
		// two minutes of unanswered pings.
		nats.PingInterval(5 * time.Second),
		nats.MaxPingsOutstanding(3),
		nats.NoCallbacksAfterClientClose(),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("disconnected from NATS server", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("reconnected to NATS server", "server", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			if onPermission != nil && errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(strings.ToLower(err.Error()), "for publish") {
				onPermission(err)
				return
			}
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			log.Error("NATS error", "connection", name, "subject", subject, "err", err)
		}),
	}
	if o.Key != nil {
		pub, err := o.Key.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("natsbus: key: %w", err)
		}
		copts = append(copts, nats.Nkey(pub, o.Key.Sign))
	}
	if o.TLS != nil {
		copts = append(copts, nats.Secure(o.TLS))
	}
	if o.InboxPrefix != "" {
		copts = append(copts, nats.CustomInboxPrefix(o.InboxPrefix))
	}
	nc, err := nats.Connect(url, copts...)
	if err != nil {
		return nil, fmt.Errorf("natsbus: connecting to %s as %q: %w", url, name, err)
	}
	return nc, nil
}

// NATS returns the underlying client connection.
func (c *Conn) NATS() *nats.Conn { return c.nc }

// IsConnected reports whether the client is connected to a server right
// now (not reconnecting, not closed), on its service connection too when
// it has one.
func (c *Conn) IsConnected() bool { return c.nc.IsConnected() && c.tr.svc.IsConnected() }

// RefusedReplies is how many service replies this client did not send, or
// the broker did not take, because the request named as its reply subject
// something that is not an inbox.
func (c *Conn) RefusedReplies() uint64 { return c.tr.refusals.count() }

// LogEventsTo sends the events an administrator should see (refused
// service replies: the first at once, then one summary per minute with
// the count) to l, saint-server's activity log; they go to
// Options.Bus.Logger until then.
func (c *Conn) LogEventsTo(l *slog.Logger) { c.tr.refusals.logTo(l) }

// transport is bus.Transport over a nats.Conn.
//
// Requests share one wildcard reply subscription, "_INBOX.<nuid>.*", made
// on first use: a reply's last token finds its caller. This is the shape
// nats.go's own Request uses; it keeps one subscription per connection
// rather than one per call, and it is what lets the server answer a request
// to a subject with no subscribers with a "503 no responders" status at
// once, since it only does that when the requester subscribes to the reply
// subject.
type transport struct {
	nc       *nats.Conn
	svc      *nats.Conn // served services' requests and replies: nc, or a connection of their own
	log      *slog.Logger
	refusals *refusals

	mu      sync.Mutex
	mux     *nats.Subscription
	prefix  string                         // "_INBOX.<nuid>."
	pending map[string]func([]byte, error) // by reply token
}

var _ bus.Transport = (*transport)(nil)

// Publish implements bus.Transport. While reconnecting, publications are
// buffered by nats.go and sent on reconnection.
func (t *transport) Publish(subject, reply string, data []byte) error {
	if reply == "" {
		return t.nc.Publish(subject, data)
	}
	return t.nc.PublishRequest(subject, reply, data)
}

// Subscribe implements bus.Transport. It flushes, so that when it returns
// the server has the subscription; while disconnected the subscription is
// made on reconnection instead, as nats.go replays subscriptions.
func (t *transport) Subscribe(pattern string, deliver bus.DeliverFunc) (bus.Subscription, error) {
	s, err := t.nc.Subscribe(pattern, func(m *nats.Msg) {
		deliver(m.Subject, m.Reply, m.Data)
	})
	if err != nil {
		return nil, err
	}
	flush(t.nc, t.log)
	return subscription{s, t.nc, t.log}, nil
}

// SubscribeService implements bus.ServiceTransport: on the service
// connection when the client has one.
func (t *transport) SubscribeService(pattern string, deliver bus.DeliverFunc) (bus.Subscription, error) {
	s, err := t.svc.Subscribe(pattern, func(m *nats.Msg) {
		deliver(m.Subject, m.Reply, m.Data)
	})
	if err != nil {
		return nil, err
	}
	flush(t.svc, t.log)
	return subscription{s, t.svc, t.log}, nil
}

// replyPrefix starts every reply subject a client may be answered on:
// nats.go's inboxes, and the nodes' (NodeInboxPrefix).
const replyPrefix = "_INBOX."

// Reply implements bus.ServiceTransport. Only an inbox is answered: a
// request naming a topic as its reply subject would otherwise have this
// client, with its own rights, publish the answer there for whoever sent
// it. The broker refuses such a publish from the service connection too.
func (t *transport) Reply(subject string, data []byte) error {
	if !strings.HasPrefix(subject, replyPrefix) || len(subject) == len(replyPrefix) {
		t.refusals.refuse(subject)
		return fmt.Errorf("%w: %q is not an inbox", bus.ErrReplyRefused, subject)
	}
	return t.svc.Publish(subject, data)
}

// subscription flushes on Unsubscribe too. nats.go stops delivering at once,
// but until the server has processed the UNSUB it still routes requests
// here, and a service that has gone must give callers ErrNoResponders, not
// a timeout.
type subscription struct {
	s   *nats.Subscription
	nc  *nats.Conn
	log *slog.Logger
}

func (s subscription) Unsubscribe() error {
	err := s.s.Unsubscribe()
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrBadSubscription) {
		// Closed connection or already unsubscribed: nothing is routed here.
		return nil
	}
	flush(s.nc, s.log)
	return err
}

// flush waits for the server to have processed what nc sent so far, when
// there is a server to ask.
func flush(nc *nats.Conn, log *slog.Logger) {
	if !nc.IsConnected() {
		return
	}
	if err := nc.FlushTimeout(flushTimeout); err != nil {
		log.Debug("flush failed", "err", err)
	}
}

// Request implements bus.Transport. timeout is not used: the caller cancels.
func (t *transport) Request(subject string, data []byte, timeout time.Duration, done func([]byte, error)) (func(), error) {
	t.mu.Lock()
	if t.mux == nil {
		prefix := t.nc.NewInbox() + "."
		mux, err := t.nc.Subscribe(prefix+"*", t.onReply)
		if err != nil {
			t.mu.Unlock()
			return nil, err
		}
		t.mux, t.prefix = mux, prefix
	}
	// The token cannot be guessed: a node the server sends requests to
	// learns this inbox's prefix, and must not be able to answer the
	// server's other requests.
	token := rand.Text()
	t.pending[token] = done
	reply := t.prefix + token
	t.mu.Unlock()

	cancel := func() {
		t.mu.Lock()
		delete(t.pending, token)
		t.mu.Unlock()
	}
	if err := t.nc.PublishRequest(subject, reply, data); err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

// onReply routes a reply to its caller: the first reply wins, later ones
// (a second server of the same service) find no caller.
func (t *transport) onReply(m *nats.Msg) {
	token := strings.TrimPrefix(m.Subject, t.prefix)
	t.mu.Lock()
	done := t.pending[token]
	delete(t.pending, token)
	t.mu.Unlock()
	if done == nil {
		return
	}
	if len(m.Data) == 0 && m.Header.Get(statusHeader) == noResponders {
		done(nil, bus.ErrNoResponders)
		return
	}
	done(m.Data, nil)
}

// The server answers a request nobody subscribes to with an empty message
// whose status line, which nats.go files under the "Status" header, is 503.
const (
	statusHeader = "Status"
	noResponders = "503"
)

// Close implements bus.Transport. It first flushes, so that what was
// published just before (a final status) still goes out.
func (t *transport) Close() error {
	flush(t.nc, t.log)
	t.nc.Close()
	if t.svc != t.nc {
		flush(t.svc, t.log)
		t.svc.Close()
	}
	t.refusals.stop()
	t.mu.Lock()
	clear(t.pending)
	t.mu.Unlock()
	return nil
}

var _ bus.Bus = (*Conn)(nil)
