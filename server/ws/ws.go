package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/internal/persource"
	"github.com/saint-os/saint/server/auth"
)

// Request is a client message. Type
// is "command" (with Target), "management", "router", "rc", "subscribe",
// "unsubscribe" or "auth".
type Request struct {
	ID       json.RawMessage `json:"id,omitempty"`
	Type     string          `json:"type"`
	Target   string          `json:"target,omitempty"`
	Action   string          `json:"action,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
	Topics   []string        `json:"topics,omitempty"`
	RateHz   float64         `json:"rate_hz,omitempty"`
	Token    string          `json:"token,omitempty"`
	ClientID string          `json:"client_id,omitempty"`
}

// Response answers a Request; ID is the request's, echoed verbatim.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Type   string          `json:"type"` // "response"
	Status string          `json:"status"`
	Data   any             `json:"data,omitempty"`
	// Error is set when Status is "error": Message says what is wrong and
	// Field names the parameter at fault, if one is.
	Error   *ErrorBody `json:"error,omitempty"`
	Message string     `json:"message,omitempty"`
}

// ErrorBody details a failed request.
type ErrorBody struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// RetryAfter is how many seconds to wait before trying again, for
	// an auth message from an address waiting after wrong tokens.
	RetryAfter int `json:"retry_after,omitempty"`
}

// State is a state update pushed to subscribers.
type State struct {
	Type      string  `json:"type"` // "state"
	Node      string  `json:"node"`
	Timestamp float64 `json:"timestamp"`
	Data      any     `json:"data"`
}

// Error codes.
const (
	CodeBadRequest   = "bad_request"
	CodeInvalidParam = "invalid_params"
	CodeUnknown      = "unknown_action"
	CodeFailed       = "failed"
	CodeUnauthorized = "unauthorized"
	CodeRateLimited  = "rate_limited"
)

// Error is a handler error with a code and the parameter at fault.
type Error struct {
	Code    string
	Field   string
	Message string
	// RetryAfter is in whole seconds (ErrorBody.RetryAfter).
	RetryAfter int
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// ParamError returns an invalid-parameter error naming field: a
// *fielderr.Error, as every package's field errors are, which the gateway
// answers with CodeInvalidParam and the field.
func ParamError(field, format string, args ...any) error { return fielderr.New(field, format, args...) }

// Handler runs a request. params is the raw "params" object (never nil:
// absent params arrive as {}). The returned value becomes "data".
type Handler func(ctx context.Context, c *Client, params json.RawMessage) (any, error)

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

// ClientInfo describes a connected client.
type ClientInfo struct {
	ID          uint64    `json:"id"`
	ClientID    string    `json:"client_id,omitempty"`
	RemoteAddr  string    `json:"remote_addr"`
	ConnectedAt time.Time `json:"connected_at"`
	Messages    uint64    `json:"messages"`
	Dropped     uint64    `json:"dropped"`
	Topics      []string  `json:"topics"`
	// Authenticated is true once the client presented the token (or when
	// authentication is off).
	Authenticated bool `json:"authenticated"`
}

// Client is one WebSocket connection.
type Client struct {
	g    *Gateway
	conn *websocket.Conn
	send chan frame
	done chan struct{}
	// ordered holds the requests that run in arrival order.
	ordered chan []byte
	once    sync.Once
	id      uint64
	addr    string
	since   time.Time

	mu       sync.Mutex
	clientID string
	topics   map[string]time.Duration // topic → minimum interval (0 = every update)
	lastSent map[streamKey]time.Time
	msgs     atomic.Uint64
	dropped  atomic.Uint64
	authed   atomic.Bool
	// closeAfterReply is a close reason to send once the current reply
	// is queued (the client that regenerated the token gets it first).
	closeAfterReply atomic.Pointer[string]

	// Token bucket, touched only by the read loop.
	tokens   float64
	lastFill time.Time
	rejected int
}

// frame is one outgoing WebSocket message: data, or a close frame when
// closeCode is set.
type frame struct {
	data      []byte
	closeCode int
	reason    string
}

// Info returns the client's description.
func (c *Client) Info() ClientInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci := ClientInfo{ID: c.id, ClientID: c.clientID, RemoteAddr: c.addr, ConnectedAt: c.since,
		Messages: c.msgs.Load(), Dropped: c.dropped.Load(), Topics: []string{}, Authenticated: c.authed.Load()}
	for t := range c.topics {
		ci.Topics = append(ci.Topics, t)
	}
	sort.Strings(ci.Topics)
	return ci
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

// CloseAfterReply makes the client's connection close, with reason, right
// after the answer to the request being handled is sent.
func (c *Client) CloseAfterReply(reason string) { c.closeAfterReply.Store(&reason) }

// closeWith queues a close frame behind what is already queued; if the
// queue is full the connection is cut at once.
func (c *Client) closeWith(code int, reason string) {
	select {
	case c.send <- frame{closeCode: code, reason: reason}:
	case <-c.done:
	default:
		c.close()
	}
}

func (c *Client) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.conn.Close()
	})
}

const (
	// orderedQueue is how many ordered requests may wait for their turn.
	orderedQueue = 256
	writeWait    = 5 * time.Second
	pongWait     = 60 * time.Second
	pingPeriod   = 25 * time.Second
)

// orderedLoop runs the client's ordered requests one after the other.
func (c *Client) orderedLoop() {
	for {
		select {
		case data := <-c.ordered:
			c.handle(data)
		case <-c.done:
			return
		}
	}
}

func (c *Client) writeLoop() {
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	for {
		select {
		case <-c.done:
			return
		case f := <-c.send:
			if f.closeCode != 0 {
				_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(f.closeCode, f.reason), time.Now().Add(writeWait))
				// Give the peer a moment to read the close frame
				// before the socket goes.
				c.closeSoon()
				return
			}
			_ = c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.conn.WriteMessage(websocket.TextMessage, f.data); err != nil {
				c.close()
				return
			}
		case <-ping.C:
			_ = c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				c.close()
				return
			}
		}
	}
}

// closeSoon closes the connection after the peer has had a second to
// read a close frame (or at once if the peer closes first).
func (c *Client) closeSoon() {
	t := time.AfterFunc(time.Second, c.close)
	go func() {
		<-c.done
		t.Stop()
	}()
}

func (c *Client) readLoop() {
	_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error { return c.conn.SetReadDeadline(time.Now().Add(pongWait)) })
	max := c.g.o.MaxMessage
	for {
		typ, r, err := c.conn.NextReader()
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		if err != nil {
			return
		}
		if len(data) > max {
			c.refuse(websocket.CloseMessageTooBig, fmt.Sprintf("message exceeds %d bytes", max))
			return
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
		if typ != websocket.TextMessage && typ != websocket.BinaryMessage {
			continue
		}
		c.msgs.Add(1)
		if !c.allow() {
			c.rejected++
			if c.rejected >= c.g.o.AbuseLimit {
				c.warn("websocket client over its rate limit; disconnecting")
				c.refuse(websocket.ClosePolicyViolation, "rate limit exceeded")
				return
			}
			c.reply(errorResponse(peekID(data), &Error{Code: CodeRateLimited,
				Message: fmt.Sprintf("rate limit: at most %g requests/s (burst %d); request dropped", c.g.o.RatePerSecond, c.g.o.RateBurst)}))
			continue
		}
		c.rejected = 0
		switch peekType(data) {
		case "auth":
			// Authentication completes before the next message is read,
			// so a client may send its first command right behind it.
			c.handle(data)
		case "management":
			// Management requests run concurrently so a slow one (an
			// adoption waiting on a node) does not hold up the next;
			// responses carry the id.
			go c.handle(data)
		default:
			// Robot control, router, rc and subscriptions run one at a
			// time in arrival order: two moves sent back to back must
			// not arrive swapped. A client that outruns its queue waits
			// here; no other client does.
			select {
			case c.ordered <- data:
			case <-c.done:
				return
			}
		}
	}
}

// warn logs why the client is cut off: an authenticated client's own
// event, an unauthenticated one's aggregated per address.
func (c *Client) warn(msg string) {
	if c.authed.Load() {
		c.g.o.Log.Warn(msg, "client", c.id, "addr", c.addr, "source", "websocket")
		return
	}
	c.g.anonAbuse.Record(c.addr, time.Now(), "unauthenticated "+msg, "client", c.id)
}

// refuse sends a close frame from the read loop and then discards what the
// peer still sends until it answers the close (or a second passes), so the
// close frame is not lost to a reset caused by unread data.
func (c *Client) refuse(code int, reason string) {
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(writeWait))
	_ = c.conn.SetReadDeadline(time.Now().Add(time.Second))
	for {
		_, r, err := c.conn.NextReader()
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
	}
}

// allow takes one token from the client's bucket.
func (c *Client) allow() bool {
	now := time.Now()
	c.tokens += now.Sub(c.lastFill).Seconds() * c.g.o.RatePerSecond
	c.lastFill = now
	if burst := float64(c.g.o.RateBurst); c.tokens > burst {
		c.tokens = burst
	}
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

// peekType returns a request's type without decoding the rest.
func peekType(data []byte) string {
	var r struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &r)
	return r.Type
}

// peekID returns a request's id without decoding the rest, or null.
func peekID(data []byte) json.RawMessage {
	var r struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &r) != nil || len(r.ID) == 0 {
		return nullID
	}
	return r.ID
}

func (c *Client) handle(data []byte) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&req); err != nil {
		c.reply(errorResponse(nullID, &Error{Code: CodeBadRequest, Message: "malformed JSON: " + err.Error()}))
		return
	}
	// One message is one JSON value: anything after it is refused, not
	// silently dropped.
	if _, err := dec.Token(); err != io.EOF {
		id := req.ID
		if len(id) == 0 {
			id = nullID
		}
		c.reply(errorResponse(id, &Error{Code: CodeBadRequest, Message: "malformed JSON: data after the request's closing brace"}))
		return
	}
	if len(req.ID) == 0 {
		req.ID = nullID
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.g.o.CallTimeout)
	defer cancel()
	var data2 any
	var err error
	switch {
	case req.Type == "":
		err = &Error{Code: CodeBadRequest, Field: "type", Message: "missing; want command, management, router, rc, subscribe, unsubscribe or auth"}
	case req.Type == "auth":
		data2, err = c.authenticate(ctx, req)
	case !c.authed.Load():
		err = &Error{Code: CodeUnauthorized, Field: "token", Message: `not authenticated: send {"type":"auth","token":"<api token>"} first, or connect with an Authorization: Bearer header`}
	}
	if err != nil {
		c.reply(errorResponse(req.ID, err))
		var e *Error
		if errors.As(err, &e) && e.Code == CodeRateLimited && req.Type == "auth" {
			// The address waits after wrong tokens: end the session
			// (1013, try again later), as HTTP answers 429.
			c.closeWith(websocket.CloseTryAgainLater, e.Message)
		}
		return
	}
	switch req.Type {
	case "auth":
	case "subscribe":
		data2, err = c.subscribe(req)
	case "unsubscribe":
		data2, err = c.unsubscribe(req)
	default:
		data2, err = c.dispatch(ctx, req)
	}
	if err != nil {
		c.reply(errorResponse(req.ID, err))
		return
	}
	c.reply(Response{ID: req.ID, Type: "response", Status: "ok", Data: orEmpty(data2)})
	if reason := c.closeAfterReply.Load(); reason != nil {
		c.closeWith(websocket.ClosePolicyViolation, *reason)
	}
}

// authenticate answers the auth message. A registered "auth" handler is
// told of the client afterwards (to record it in the activity log).
func (c *Client) authenticate(ctx context.Context, req Request) (any, error) {
	if c.g.authRequired() {
		if req.Token == "" {
			return nil, ParamError("token", "required")
		}
		v := c.g.o.Guard.Check(c.addr, "websocket", req.Token, c.g.o.Auth.Valid)
		if v.RetryAfter > 0 {
			return nil, &Error{Code: CodeRateLimited, Field: "token", RetryAfter: v.RetryAfterSeconds(),
				Message: fmt.Sprintf("too many wrong API tokens from %s: retry in %d s", c.addr, v.RetryAfterSeconds())}
		}
		if !v.OK {
			return nil, &Error{Code: CodeUnauthorized, Field: "token", Message: "wrong API token"}
		}
	}
	c.authed.Store(true)
	if req.ClientID != "" {
		c.SetClientID(req.ClientID)
	}
	c.g.mu.RLock()
	h := c.g.handlers["auth/"]
	c.g.mu.RUnlock()
	if h != nil {
		if _, err := h(ctx, c, json.RawMessage("{}")); err != nil {
			return nil, err
		}
	}
	return map[string]any{"authenticated": true, "client_id": req.ClientID, "auth_required": c.g.authRequired()}, nil
}

var nullID = json.RawMessage("null")

func orEmpty(v any) any {
	if v == nil {
		return struct{}{}
	}
	return v
}

func errorResponse(id json.RawMessage, err error) Response {
	body := &ErrorBody{Code: CodeFailed, Message: err.Error()}
	var e *Error
	var fe *fielderr.Error
	switch {
	case errors.As(err, &e):
		body.Code, body.Field, body.Message, body.RetryAfter = e.Code, e.Field, e.Error(), e.RetryAfter
	case errors.As(err, &fe):
		body.Code, body.Field = CodeInvalidParam, fe.Field
	case errors.Is(err, context.DeadlineExceeded):
		body.Message = "timed out: " + err.Error()
	}
	return Response{ID: id, Type: "response", Status: "error", Error: body, Message: body.Message}
}

func (c *Client) dispatch(ctx context.Context, req Request) (any, error) {
	if req.Action == "" {
		return nil, &Error{Code: CodeBadRequest, Field: "action", Message: "missing"}
	}
	if req.Type == "command" && req.Target == "" {
		return nil, &Error{Code: CodeBadRequest, Field: "target", Message: "missing; want head, arms, tracks or system"}
	}
	k := key(req.Type, req.Target, req.Action)
	c.g.mu.RLock()
	h, ok := c.g.handlers[k]
	c.g.mu.RUnlock()
	if !ok {
		return nil, c.g.unknown(req)
	}
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	return h(ctx, c, params)
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

func (c *Client) subscribe(req Request) (any, error) {
	if len(req.Topics) == 0 {
		return nil, ParamError("topics", "want a non-empty list of topics")
	}
	if req.RateHz < 0 || req.RateHz > 1000 {
		return nil, ParamError("rate_hz", "want 0 (every update) to 1000, got %v", req.RateHz)
	}
	var every time.Duration
	if req.RateHz > 0 {
		every = time.Duration(float64(time.Second) / req.RateHz)
	}
	c.g.mu.RLock()
	declared := len(c.g.topics) > 0
	unknown := ""
	for _, t := range req.Topics {
		if declared && !c.g.topics[t] {
			unknown = t
			break
		}
	}
	c.g.mu.RUnlock()
	if unknown != "" {
		return nil, ParamError("topics", "unknown topic %q; known: %s", unknown, strings.Join(c.g.Topics(), ", "))
	}
	c.mu.Lock()
	for _, t := range req.Topics {
		c.topics[t] = every
	}
	c.mu.Unlock()
	return map[string]any{"topics": c.Info().Topics}, nil
}

func (c *Client) unsubscribe(req Request) (any, error) {
	c.mu.Lock()
	for _, t := range req.Topics {
		delete(c.topics, t)
		for k := range c.lastSent {
			if k.topic == t {
				delete(c.lastSent, k)
			}
		}
	}
	c.mu.Unlock()
	return map[string]any{"topics": c.Info().Topics}, nil
}

// SetClientID records the id a client gave in its auth message.
func (c *Client) SetClientID(id string) {
	c.mu.Lock()
	c.clientID = id
	c.mu.Unlock()
}

func (c *Client) reply(r Response) {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(errorResponse(r.ID, err))
	}
	select {
	case c.send <- frame{data: b}:
	case <-c.done:
	default:
		// The client is not reading its responses: cut it off rather than
		// let its queue grow.
		c.warn("websocket client too slow; disconnecting")
		c.close()
	}
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

// DecodeParams decodes params into v, rejecting unknown fields is not done
// (clients may send more than a command needs), but a field of the wrong
// type is reported by name.
func DecodeParams(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return ParamError(te.Field, "want %s, got %s", te.Type.String(), te.Value)
		}
		return &Error{Code: CodeBadRequest, Field: "params", Message: err.Error()}
	}
	return nil
}
