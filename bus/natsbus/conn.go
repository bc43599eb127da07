package natsbus

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
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
	// tree of replies its permissions let it read.
	InboxPrefix string
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
	lt := &linkTracker{log: log, onLink: o.OnLink}
	copts := []nats.Option{
		nats.Name(o.Name),
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
			return reconnectDelay(attempts, o.ReconnectWait, o.MaxReconnectWait, rand.Float64())
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
			log.Error("NATS error", "subject", subject, "err", err)
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
		return nil, fmt.Errorf("natsbus: connecting to %s: %w", url, err)
	}
	lt.nc.Store(nc)
	t := &transport{nc: nc, log: log, pending: make(map[string]func([]byte, error))}
	return &Conn{Conn: bus.NewConn(t, &o.Bus), nc: nc}, nil
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
// now (not reconnecting, not closed).
func (c *Conn) IsConnected() bool { return c.nc.IsConnected() }

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
	nc  *nats.Conn
	log *slog.Logger

	mu      sync.Mutex
	mux     *nats.Subscription
	prefix  string // "_INBOX.<nuid>."
	next    uint64
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
	t.flush()
	return subscription{s, t}, nil
}

// subscription flushes on Unsubscribe too. nats.go stops delivering at once,
// but until the server has processed the UNSUB it still routes requests
// here, and a service that has gone must give callers ErrNoResponders, not
// a timeout.
type subscription struct {
	s *nats.Subscription
	t *transport
}

func (s subscription) Unsubscribe() error {
	err := s.s.Unsubscribe()
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrBadSubscription) {
		// Closed connection or already unsubscribed: nothing is routed here.
		return nil
	}
	s.t.flush()
	return err
}

// flush waits for the server to have processed what was sent so far, when
// there is a server to ask.
func (t *transport) flush() {
	if !t.nc.IsConnected() {
		return
	}
	if err := t.nc.FlushTimeout(flushTimeout); err != nil {
		t.log.Debug("flush failed", "err", err)
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
	t.next++
	token := strconv.FormatUint(t.next, 36)
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
	t.flush()
	t.nc.Close()
	t.mu.Lock()
	clear(t.pending)
	t.mu.Unlock()
	return nil
}

var _ bus.Bus = (*Conn)(nil)
