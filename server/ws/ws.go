package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Request is a client message (spec: WebSocket API, Message Format). Type
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
)

// Error is a handler error with a code and the parameter at fault.
type Error struct {
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// ParamError returns an invalid-parameter error naming field.
func ParamError(field, format string, args ...any) error {
	return &Error{Code: CodeInvalidParam, Field: field, Message: fmt.Sprintf(format, args...)}
}

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
	// OnConnect / OnDisconnect are told of clients coming and going.
	OnConnect, OnDisconnect func(ClientInfo)
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

	mu       sync.RWMutex
	handlers map[string]Handler
	clients  map[*Client]struct{}
	nextID   atomic.Uint64
}

// New returns a gateway with no handlers.
func New(o Options) *Gateway {
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
	return &Gateway{
		o:        o,
		handlers: map[string]Handler{},
		clients:  map[*Client]struct{}{},
		upgrader: websocket.Upgrader{
			ReadBufferSize: 4096, WriteBufferSize: 4096,
			// The API is used from the web UI and from apps on the robot's
			// network; authentication, not the Origin header, guards it.
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}
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
}

// Client is one WebSocket connection.
type Client struct {
	g     *Gateway
	conn  *websocket.Conn
	send  chan []byte
	done  chan struct{}
	once  sync.Once
	id    uint64
	addr  string
	since time.Time

	mu       sync.Mutex
	clientID string
	topics   map[string]time.Duration // topic → minimum interval (0 = every update)
	lastSent map[string]time.Time
	msgs     atomic.Uint64
	dropped  atomic.Uint64
}

// Info returns the client's description.
func (c *Client) Info() ClientInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci := ClientInfo{ID: c.id, ClientID: c.clientID, RemoteAddr: c.addr, ConnectedAt: c.since,
		Messages: c.msgs.Load(), Dropped: c.dropped.Load(), Topics: []string{}}
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

// ServeHTTP upgrades the connection and serves the client until it leaves.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	c := &Client{
		g: g, conn: conn, send: make(chan []byte, g.o.SendQueue), done: make(chan struct{}),
		id: g.nextID.Add(1), addr: host, since: g.o.Now(),
		topics: map[string]time.Duration{}, lastSent: map[string]time.Time{},
	}
	g.mu.Lock()
	g.clients[c] = struct{}{}
	g.mu.Unlock()
	if g.o.OnConnect != nil {
		g.o.OnConnect(c.Info())
	}
	go c.writeLoop()
	c.readLoop()
	c.close()
	g.mu.Lock()
	delete(g.clients, c)
	g.mu.Unlock()
	if g.o.OnDisconnect != nil {
		g.o.OnDisconnect(c.Info())
	}
}

// CloseAll disconnects every client (server shutdown).
func (g *Gateway) CloseAll() {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for c := range g.clients {
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
	writeWait  = 5 * time.Second
	pongWait   = 60 * time.Second
	pingPeriod = 25 * time.Second
	maxMessage = 4 << 20 // firmware-sized params are uploaded over HTTP, not here
)

func (c *Client) writeLoop() {
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	for {
		select {
		case <-c.done:
			return
		case b := <-c.send:
			_ = c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.conn.WriteMessage(websocket.TextMessage, b); err != nil {
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

func (c *Client) readLoop() {
	c.conn.SetReadLimit(maxMessage)
	_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error { return c.conn.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		typ, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
		if typ != websocket.TextMessage && typ != websocket.BinaryMessage {
			continue
		}
		c.msgs.Add(1)
		// Requests run concurrently so a slow one (an adoption waiting on
		// a node) does not hold up the next; responses carry the id.
		go c.handle(data)
	}
}

func (c *Client) handle(data []byte) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&req); err != nil {
		c.reply(errorResponse(nullID, &Error{Code: CodeBadRequest, Message: "malformed JSON: " + err.Error()}))
		return
	}
	if len(req.ID) == 0 {
		req.ID = nullID
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.g.o.CallTimeout)
	defer cancel()
	var data2 any
	var err error
	switch req.Type {
	case "":
		err = &Error{Code: CodeBadRequest, Field: "type", Message: "missing; want command, management, router, rc, subscribe, unsubscribe or auth"}
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
	var fe interface{ ParamField() string }
	switch {
	case errors.As(err, &e):
		body.Code, body.Field, body.Message = e.Code, e.Field, e.Error()
	case errors.As(err, &fe):
		body.Code, body.Field = CodeInvalidParam, fe.ParamField()
	case errors.Is(err, context.DeadlineExceeded):
		body.Message = "timed out: " + err.Error()
	}
	return Response{ID: id, Type: "response", Status: "error", Error: body, Message: body.Message}
}

func (c *Client) dispatch(ctx context.Context, req Request) (any, error) {
	if req.Action == "" && req.Type != "auth" {
		return nil, &Error{Code: CodeBadRequest, Field: "action", Message: "missing"}
	}
	if req.Type == "command" && req.Target == "" {
		return nil, &Error{Code: CodeBadRequest, Field: "target", Message: "missing; want head, arms, tracks or system"}
	}
	k := key(req.Type, req.Target, req.Action)
	if req.Type == "auth" {
		k = "auth/"
	}
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
	if req.Type == "auth" {
		params, _ = json.Marshal(map[string]string{"token": req.Token, "client_id": req.ClientID})
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
		delete(c.lastSent, t)
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
	case c.send <- b:
	case <-c.done:
	default:
		// The client is not reading its responses: cut it off rather than
		// let its queue grow.
		c.g.o.Log.Warn("websocket client too slow; disconnecting", "client", c.id, "addr", c.addr)
		c.close()
	}
}

// Publish pushes a state update for topic (a node name such as "head", or
// "nodes") to the clients subscribed to it, at most at each client's rate.
func (g *Gateway) Publish(topic string, data any) {
	g.mu.RLock()
	cs := make([]*Client, 0, len(g.clients))
	for c := range g.clients {
		cs = append(cs, c)
	}
	g.mu.RUnlock()
	now := g.o.Now()
	var b []byte
	for _, c := range cs {
		c.mu.Lock()
		every, ok := c.topics[topic]
		if ok && every > 0 && now.Sub(c.lastSent[topic]) < every {
			ok = false
		}
		if ok {
			c.lastSent[topic] = now
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
		case c.send <- b:
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
