package ws

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/internal/persource"
	"github.com/saint-os/saint/server/auth"
)

// Options configures a Gateway.
type Options struct {
	// SendQueue is each client's outgoing queue length (default 256).
	SendQueue int
	// CallTimeout bounds one request's handling (default 10 s).
	CallTimeout time.Duration
	// Now stamps state updates; nil means time.Now (edge code).
	Now func() time.Time
	Log *slog.Logger
	// OnConnect / OnDisconnect are told of authenticated sessions coming
	// and going: OnConnect of a client authenticated on connecting (bearer
	// header, or authentication off), OnDisconnect of one that was
	// authenticated when it left. Sessions that end without
	// authenticating are not told one by one: the gateway logs them per
	// address per minute with their count, so a loop of them cannot push
	// the real events out of the activity log.
	OnConnect, OnDisconnect func(ClientInfo)

	// Auth checks API tokens. Nil, or Required() false, lets every client
	// in; otherwise a client must present the token (auth message or
	// bearer header) before anything but "auth" is answered.
	Auth Authenticator
	// Guard throttles wrong tokens per address, on the bearer header and
	// the auth message alike; the server passes the one its other
	// listeners use. Nil makes one for this gateway.
	Guard *auth.Guard
	// AllowedOrigins are the browser origins ("http://robot.local")
	// allowed besides the server's own host. Requests without an Origin
	// header (programs, not browsers) are always allowed.
	AllowedOrigins []string
	// MaxMessage is the largest request in bytes (default 64 KiB); a
	// larger one closes the connection with code 1009 and a reason.
	MaxMessage int
	// RatePerSecond and RateBurst are each client's token bucket (default
	// 1,000/s, burst 2,000: a controller streaming commands to every
	// target fits well inside it). A request beyond it is answered "rate_limited";
	// AbuseLimit consecutive rejected requests (default 100) close the
	// connection with code 1008.
	RatePerSecond float64
	RateBurst     int
	AbuseLimit    int
	// AuthTimeout closes a connection that has not authenticated this
	// long after connecting (default 30 s), so idle unauthenticated
	// connections do not pile up.
	AuthTimeout time.Duration
	// MaxConns and MaxConnsPerAddr cap the connections open at once, in
	// all and from one address (defaults 512 and 64): a connection beyond
	// them is refused before the upgrade, 503 and 429, saying which limit.
	MaxConns        int
	MaxConnsPerAddr int
}

// Authenticator is what the gateway needs of the API token store.
type Authenticator interface {
	// Required reports whether clients must authenticate.
	Required() bool
	// Valid reports whether token is the API token.
	Valid(token string) bool
}

// Gateway is the WebSocket API: it upgrades HTTP connections, decodes
// requests, dispatches them to handlers by type and action, and pushes
// state updates to subscribed clients.
//
// Each client has a bounded send queue. Drop policy: a state update that
// finds the queue full is dropped for that client (and counted); a response
// that finds it full closes the connection, since the client is not reading.
// A slow client therefore never delays the others.
type Gateway struct {
	o        Options
	upgrader websocket.Upgrader
	// anonSessions and anonAbuse aggregate, per address per minute, the
	// sessions that ended without authenticating and the
	// unauthenticated clients cut off for abuse.
	anonSessions, anonAbuse *persource.Events
	// open counts the connections held (reserved before the upgrade)
	// per remote address, and openTotal all of them.
	connMu    sync.Mutex
	open      map[string]int
	openTotal int

	mu       sync.RWMutex
	handlers map[string]Handler
	clients  map[*Client]struct{}
	topics   map[string]bool
	events   map[string]bool
	nextID   atomic.Uint64
	// sessionGen counts CloseSessions calls, and closeReason is the
	// last one's reason: a client that authenticated while sessions were
	// being closed, but was not yet registered, is closed too.
	sessionGen  uint64
	closeReason string
}

// New returns a gateway with no handlers.
func New(o Options) *Gateway {
	if o.MaxConns <= 0 {
		o.MaxConns = 512
	}
	if o.MaxConnsPerAddr <= 0 {
		o.MaxConnsPerAddr = 64
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 256
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.RatePerSecond <= 0 {
		o.RatePerSecond = 1000
	}
	if o.RateBurst <= 0 {
		o.RateBurst = 2 * int(o.RatePerSecond)
	}
	if o.AbuseLimit <= 0 {
		o.AbuseLimit = 100
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = 30 * time.Second
	}
	if o.Guard == nil {
		o.Guard = auth.NewGuard(auth.GuardOptions{Log: o.Log})
	}
	g := &Gateway{
		o:        o,
		handlers: map[string]Handler{},
		clients:  map[*Client]struct{}{},
		topics:   map[string]bool{},
		events:   map[string]bool{},
		// At most 1024 addresses tracked at once.
		anonSessions: persource.NewEvents(o.Log, slog.LevelInfo, time.Minute, 1024, eventsPerMinute,
			"WebSocket sessions closed without authenticating", "source", "websocket"),
		anonAbuse: persource.NewEvents(o.Log, slog.LevelWarn, time.Minute, 1024, eventsPerMinute,
			"unauthenticated WebSocket clients cut off", "source", "websocket"),
	}
	g.upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096, CheckOrigin: g.checkOrigin}
	return g
}

// eventsPerMinute bounds the per-address lines of each kind of
// unauthenticated event (sessions, cut-offs) per minute across all
// addresses; the rest of the minute's are summed in one line.
const eventsPerMinute = 20

// DefaultMaxMessage is the default request size limit: commands are small,
// firmware goes over HTTP.
const DefaultMaxMessage = 64 << 10

// checkOrigin refuses browser connections from pages of another origin (a
// web page the operator happens to visit must not drive the robot).
// Clients that send no Origin header are programs, not browsers.
func (g *Gateway) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	for _, a := range g.o.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}

// authRequired reports whether clients must present the token.
func (g *Gateway) authRequired() bool { return g.o.Auth != nil && g.o.Auth.Required() }

// SetTopics declares the topics clients may subscribe to; subscribing to
// another is an error naming it. With none declared any topic is accepted.
func (g *Gateway) SetTopics(topics ...string) {
	g.mu.Lock()
	for _, t := range topics {
		g.topics[t] = true
	}
	g.mu.Unlock()
}

// SetEventTopics declares topics whose updates are events rather than
// samples (the activity log): each is delivered whatever the client's
// rate_hz, since skipping one loses it.
func (g *Gateway) SetEventTopics(topics ...string) {
	g.mu.Lock()
	for _, t := range topics {
		g.topics[t] = true
		g.events[t] = true
	}
	g.mu.Unlock()
}

// Topics lists the declared topics, sorted.
func (g *Gateway) Topics() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]string, 0, len(g.topics))
	for t := range g.topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// key is the dispatch key: "management/list_unadopted",
// "command/head/move".
func key(typ, target, action string) string {
	if typ == "command" {
		return typ + "/" + target + "/" + action
	}
	return typ + "/" + action
}

// Handle registers h for messages of type typ and action ("management",
// "adopt_node").
func (g *Gateway) Handle(typ, action string, h Handler) {
	g.mu.Lock()
	g.handlers[key(typ, "", action)] = h
	g.mu.Unlock()
}

// HandleCommand registers h for {"type":"command","target":target,"action":action}.
func (g *Gateway) HandleCommand(target, action string, h Handler) {
	g.mu.Lock()
	g.handlers[key("command", target, action)] = h
	g.mu.Unlock()
}

// Lookup returns the handler registered for typ, target (commands only)
// and action, or nil. Other protocols' gateways (the Foxglove WebSocket
// server) run the same handlers with it, so their requests are checked and
// routed exactly like this gateway's; they pass a nil *Client, so only
// handlers that do not use their client may be offered to them.
func (g *Gateway) Lookup(typ, target, action string) Handler {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.handlers[key(typ, target, action)]
}

// Actions lists the registered dispatch keys, sorted.
func (g *Gateway) Actions() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var ks []string
	for k := range g.handlers {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Clients lists connected clients.
func (g *Gateway) Clients() []ClientInfo {
	g.mu.RLock()
	cs := make([]*Client, 0, len(g.clients))
	for c := range g.clients {
		cs = append(cs, c)
	}
	g.mu.RUnlock()
	out := make([]ClientInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// reserve counts a connection from addr against the caps, or returns the
// HTTP status and reason to refuse it with.
func (g *Gateway) reserve(addr string) (int, string) {
	g.connMu.Lock()
	defer g.connMu.Unlock()
	if g.open == nil {
		g.open = map[string]int{}
	}
	switch {
	case g.openTotal >= g.o.MaxConns:
		return http.StatusServiceUnavailable, fmt.Sprintf("too many WebSocket connections: %d open, the server's limit", g.openTotal)
	case g.open[addr] >= g.o.MaxConnsPerAddr:
		return http.StatusTooManyRequests, fmt.Sprintf("too many WebSocket connections from %s: %d open, the limit per address", addr, g.open[addr])
	}
	g.open[addr]++
	g.openTotal++
	return 0, ""
}

func (g *Gateway) unreserve(addr string) {
	g.connMu.Lock()
	defer g.connMu.Unlock()
	g.openTotal--
	if g.open[addr]--; g.open[addr] <= 0 {
		delete(g.open, addr)
	}
}

// ServeHTTP upgrades the connection and serves the client until it leaves.
//
// A bearer token on the upgrade request authenticates the client at once; a
// wrong one is refused with 401 before the upgrade.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.RLock()
	gen := g.sessionGen
	g.mu.RUnlock()
	authed := !g.authRequired()
	host := auth.RemoteHost(r)
	if tok := bearerToken(r); tok != "" && g.o.Auth != nil {
		v := g.o.Guard.Check(host, "websocket", tok, g.o.Auth.Valid)
		if v.RetryAfter > 0 {
			auth.Refuse(w, v)
			return
		}
		if !v.OK {
			w.Header().Set("WWW-Authenticate", `Bearer realm="saint", error="invalid_token"`)
			http.Error(w, "unauthorized: wrong API token", http.StatusUnauthorized)
			return
		}
		authed = true
	} else if tok != "" {
		authed = true
	}
	if code, why := g.reserve(host); code != 0 {
		w.Header().Set("Retry-After", "10")
		http.Error(w, why, code)
		return
	}
	defer g.unreserve(host)
	conn, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered (403 for a foreign Origin)
	}
	c := &Client{
		g: g, conn: conn, send: make(chan frame, g.o.SendQueue), done: make(chan struct{}),
		ordered: make(chan []byte, orderedQueue),
		id:      g.nextID.Add(1), addr: host, since: g.o.Now(),
		topics: map[string]time.Duration{}, lastSent: map[streamKey]time.Time{},
		tokens: float64(g.o.RateBurst), lastFill: time.Now(),
	}
	c.authed.Store(authed)
	g.mu.Lock()
	g.clients[c] = struct{}{}
	stale, reason := g.sessionGen != gen, g.closeReason
	g.mu.Unlock()
	if stale && authed {
		c.closeWith(websocket.ClosePolicyViolation, reason)
	}
	if authed && g.o.OnConnect != nil {
		g.o.OnConnect(c.Info())
	}
	if !authed {
		t := time.AfterFunc(g.o.AuthTimeout, func() {
			if !c.authed.Load() {
				c.closeWith(websocket.ClosePolicyViolation, "authentication timeout")
			}
		})
		defer t.Stop()
	}
	go c.writeLoop()
	go c.orderedLoop()
	c.readLoop()
	c.close()
	g.mu.Lock()
	delete(g.clients, c)
	g.mu.Unlock()
	switch {
	case !c.authed.Load():
		g.anonSessions.Record(host, time.Now(), "WebSocket session from "+host+" closed without authenticating")
	case g.o.OnDisconnect != nil:
		g.o.OnDisconnect(c.Info())
	}
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) > len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		return strings.TrimSpace(h[len(prefix):])
	}
	return ""
}

// CloseAll disconnects every client (server shutdown).
func (g *Gateway) CloseAll() {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for c := range g.clients {
		c.close()
	}
}

// CloseSessions closes every client except keep with a close frame
// (1008, reason): after the token is regenerated, or authentication turned
// on, every session must authenticate again.
func (g *Gateway) CloseSessions(keep *Client, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sessionGen++
	g.closeReason = reason
	for c := range g.clients {
		if c != keep {
			c.closeWith(websocket.ClosePolicyViolation, reason)
		}
	}
}

func (g *Gateway) unknown(req Request) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	prefix := req.Type + "/"
	field, what := "action", req.Action
	if req.Type == "command" {
		prefix += req.Target + "/"
	}
	var known []string
	typeKnown := false
	for k := range g.handlers {
		if strings.HasPrefix(k, req.Type+"/") {
			typeKnown = true
		}
		if strings.HasPrefix(k, prefix) {
			known = append(known, strings.TrimPrefix(k, prefix))
		}
	}
	if !typeKnown {
		return &Error{Code: CodeUnknown, Field: "type", Message: fmt.Sprintf("unknown type %q", req.Type)}
	}
	if req.Type == "command" && len(known) == 0 {
		return &Error{Code: CodeUnknown, Field: "target", Message: fmt.Sprintf("unknown target %q", req.Target)}
	}
	sort.Strings(known)
	return &Error{Code: CodeUnknown, Field: field, Message: fmt.Sprintf("unknown %s action %q; known: %s", strings.TrimSuffix(prefix, "/"), what, strings.Join(known, ", "))}
}

// streamKey names one stream of a topic's updates: a client's rate_hz
// applies to each stream of a topic on its own.
type streamKey struct{ topic, stream string }

// Watched says whether an authenticated client subscribes to topic: a
// publisher whose update is costly to build (not only to encode, which
// Publish does only for subscribers) can skip building it.
func (g *Gateway) Watched(topic string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for c := range g.clients {
		if !c.authed.Load() {
			continue
		}
		c.mu.Lock()
		_, ok := c.topics[topic]
		c.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// Publish pushes a state update for topic (a node name such as "head", or
// "nodes") to the clients subscribed to it, at most at each client's rate.
func (g *Gateway) Publish(topic string, data any) { g.PublishStream(topic, "", data) }

// PublishStream is Publish for a topic that carries several streams, such
// as "arms" with the left and the right arm's states: a client's rate_hz
// limits each stream on its own, so that at 10 Hz a client still sees
// both arms instead of whichever published last before each slot.
func (g *Gateway) PublishStream(topic, stream string, data any) {
	g.mu.RLock()
	cs := make([]*Client, 0, len(g.clients))
	for c := range g.clients {
		cs = append(cs, c)
	}
	isEvent := g.events[topic]
	g.mu.RUnlock()
	now := g.o.Now()
	var b []byte
	for _, c := range cs {
		if !c.authed.Load() {
			continue
		}
		c.mu.Lock()
		every, ok := c.topics[topic]
		key := streamKey{topic, stream}
		if ok && !isEvent && every > 0 && now.Sub(c.lastSent[key]) < every {
			ok = false
		}
		if ok {
			c.lastSent[key] = now
		}
		c.mu.Unlock()
		if !ok {
			continue
		}
		if b == nil {
			var err error
			b, err = json.Marshal(State{Type: "state", Node: topic, Timestamp: float64(now.UnixNano()) / 1e9, Data: data})
			if err != nil {
				g.o.Log.Error("state not encodable", "topic", topic, "err", err)
				return
			}
		}
		select {
		case c.send <- frame{data: b}:
		default:
			c.dropped.Add(1)
		}
	}
}
