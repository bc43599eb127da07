package natsbus

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/bus"
)

// DefaultReconnectWait is how long a client waits between its first
// reconnect attempts when Options.ReconnectWait is 0. It is short because
// a node whose server restarts should be back within a control period or
// two.
const DefaultReconnectWait = 100 * time.Millisecond

// DefaultMaxReconnectWait bounds the backoff between reconnect attempts
// when Options.MaxReconnectWait is 0: a node kept out (a server that is
// down, or one that refuses it while another device holds its id) tries
// again at least this often, so it is back within seconds once it may be.
const DefaultMaxReconnectWait = 2 * time.Second

// linkLogEvery bounds how often a client still reconnecting says so in
// its log.
const linkLogEvery = 30 * time.Second

// flushTimeout bounds the round trip Subscribe and Close make to the server.
const flushTimeout = 2 * time.Second

// Options configures a client connection. A nil *Options means the zero
// value, which is ready to use.
type Options struct {
	// Name identifies the client in the server's monitoring ("node pi-a1b2").
	Name string
	// ReconnectWait is the pause before the second reconnect attempt (the
	// first is made at once); each pause after doubles, up to
	// MaxReconnectWait, and is drawn at random between half and all of
	// that, so clients refused together do not come back together.
	// 0 means DefaultReconnectWait. Reconnection never gives up, whatever
	// the error: a refused authorization (another device holding a node's
	// id for a while) is retried like a server that is down.
	ReconnectWait time.Duration
	// MaxReconnectWait bounds the pauses; 0 means DefaultMaxReconnectWait.
	MaxReconnectWait time.Duration
	// OnLink, if set, is told each time the link goes down, each failed
	// attempt to bring it back, and when it is back. It runs on the
	// connection's callback goroutine and must not block.
	OnLink func(Link)
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

// Link is the state of a client's connection, for Options.OnLink.
type Link struct {
	// Up is true once connected (again).
	Up bool
	// Attempts counts the failed attempts since the link went down (the
	// ones it took to come back, when Up).
	Attempts int
	// Err is the last error: why the link went down or the last attempt
	// failed (an authorization refused, a server that does not answer);
	// when Up, the last error before it came back, or nil.
	Err error
	// Down is how long the link has been (or was) down.
	Down time.Duration
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
	if o.MaxReconnectWait <= 0 {
		o.MaxReconnectWait = DefaultMaxReconnectWait
	}
	o.MaxReconnectWait = max(o.MaxReconnectWait, o.ReconnectWait)
	log := o.Bus.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "natsbus", "url", url)
	if o.InboxPrefix != "" && !strings.HasPrefix(o.InboxPrefix+".", replyPrefix) {
		return nil, fmt.Errorf("natsbus: Options.InboxPrefix %q: want it under %q", o.InboxPrefix, replyPrefix)
	}
	t := &transport{log: log, pending: make(map[string]func([]byte, error)), refusals: newRefusals(log, refusalWindow)}
	nc, err := dial(url, o.Name, &o, log, nil, o.OnLink)
	if err != nil {
		return nil, err
	}
	t.nc, t.svc = nc, nc
	if o.ServiceName != "" {
		// The broker reports a reply it refused on this connection
		// (a permission violation): counted with the transport's own
		// refusals, never logged one by one.
		svc, err := dial(url, o.ServiceName, &o, log, t.refusals.brokerError, nil)
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
// violations the server reports instead of the log; onLink, when set, is
// told of the link's state (Options.OnLink).
func dial(url, name string, o *Options, log *slog.Logger, onPermission func(error), onLink func(Link)) (*nats.Conn, error) {
	lt := &linkTracker{log: log.With("connection", name), onLink: onLink}
	copts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		// nats.go gives up when a server refuses the same authorization
		// twice. A node must not: while another device holds its id (an
		// unadopted node rebooting, a squatter) it is refused, and it must
		// come back by itself once that device has gone.
		nats.IgnoreAuthErrorAbort(),
		// The first attempt is at once (a server that closed the connection
		// to apply new permissions, at adoption, is there), then the pauses
		// back off with jitter (ReconnectWait). nats.go's own delay would
		// add up to 1 s of random delay with TLS to every attempt, made for
		// thousands of clients; a robot has a handful.
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			// Called before each attempt: attempts-1 have failed.
			if attempts > 1 {
				lt.failed(attempts - 1)
			}
			return reconnectDelay(attempts, o.ReconnectWait, o.MaxReconnectWait, mrand.Float64())
		}),
		nats.RetryOnFailedConnect(o.RetryConnect),
		// A pulled cable must be noticed in seconds, not after the default
		// two minutes of unanswered pings.
		nats.PingInterval(5 * time.Second),
		nats.MaxPingsOutstanding(3),
		nats.NoCallbacksAfterClientClose(),
		nats.ConnectHandler(func(*nats.Conn) { lt.up() }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { lt.down(err) }),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { lt.setErr(err) }),
		nats.ReconnectHandler(func(*nats.Conn) { lt.up() }),
		nats.ErrorHandler(func(nc *nats.Conn, s *nats.Subscription, err error) {
			if onPermission != nil && errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(strings.ToLower(err.Error()), "for publish") {
				onPermission(err)
				return
			}
			if s == nil && !nc.IsConnected() {
				// A refusal while reconnecting (authorization): the link's
				// log says it, rate-limited.
				lt.setErr(err)
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
	lt.nc.Store(nc)
	return nc, nil
}

// reconnectDelay is the pause before reconnect attempt number attempts
// (from 1): none before the first, then wait doubled at each attempt up
// to most, of which r (in [0, 1)) takes between half and all.
func reconnectDelay(attempts int, wait, most time.Duration, r float64) time.Duration {
	if attempts <= 1 {
		return 0
	}
	d := wait
	for i := 2; i < attempts && d < most; i++ {
		d *= 2
	}
	d = min(d, most)
	return d/2 + time.Duration(float64(d/2)*r)
}

// linkTracker follows a connection's link for its log and Options.OnLink:
// the log says when it goes down, at most every linkLogEvery that it is
// still down (with the attempts and the last error), and when it is back.
type linkTracker struct {
	log    *slog.Logger
	onLink func(Link)
	nc     atomic.Pointer[nats.Conn] // set once Connect returns

	mu       sync.Mutex
	isDown   bool
	since    time.Time // when it went down
	attempts int       // failed since
	lastErr  error
	logged   time.Time // last "still down" line
}

// down: the link went down with err.
func (l *linkTracker) down(err error) {
	now := time.Now()
	l.mu.Lock()
	if l.isDown {
		l.mu.Unlock()
		return
	}
	l.isDown, l.since, l.attempts, l.lastErr, l.logged = true, now, 0, err, now
	l.mu.Unlock()
	l.log.Warn("disconnected from NATS server; reconnecting until it lets this client in", "err", err)
	l.report(Link{Err: err})
}

// setErr records why the link is still down.
func (l *linkTracker) setErr(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	l.lastErr = err
	l.mu.Unlock()
}

// failed: attempts attempts to bring the link back have failed.
func (l *linkTracker) failed(attempts int) {
	var err error
	if nc := l.nc.Load(); nc != nil {
		// The refusal of the last attempt (authorization), which nats.go
		// reports through no callback before the first connection.
		err = nc.LastError()
	}
	now := time.Now()
	l.mu.Lock()
	first := !l.isDown // the first connection, retried (Options.RetryConnect)
	if first {
		l.isDown, l.since = true, now
	}
	if err != nil {
		l.lastErr = err
	}
	l.attempts = attempts
	link := Link{Attempts: attempts, Err: l.lastErr, Down: now.Sub(l.since)}
	tell := first || now.Sub(l.logged) >= linkLogEvery
	if tell {
		l.logged = now
	}
	l.mu.Unlock()
	switch {
	case first:
		l.log.Warn("not connected to NATS server yet; retrying until it lets this client in", "err", link.Err)
	case tell:
		l.log.Warn("still not connected to NATS server; retrying", "attempts", link.Attempts, "down_for", link.Down.Round(time.Second), "last_err", link.Err)
	}
	l.report(link)
}

// up: the link is (back) up.
func (l *linkTracker) up() {
	now := time.Now()
	l.mu.Lock()
	was := l.isDown
	link := Link{Up: true, Attempts: l.attempts, Err: l.lastErr, Down: now.Sub(l.since)}
	l.isDown, l.attempts, l.lastErr = false, 0, nil
	l.mu.Unlock()
	if !was {
		link = Link{Up: true}
	}
	nc := l.nc.Load()
	server := ""
	if nc != nil {
		server = nc.ConnectedUrlRedacted()
	}
	switch {
	case link.Attempts > 0 || link.Err != nil:
		l.log.Info("connected to NATS server", "server", server, "after_attempts", link.Attempts, "down_for", link.Down.Round(time.Millisecond), "last_err", link.Err)
	case was:
		l.log.Info("connected to NATS server", "server", server)
	}
	l.report(link)
}

func (l *linkTracker) report(link Link) {
	if l.onLink != nil {
		l.onLink(link)
	}
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
