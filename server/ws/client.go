package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/internal/fielderr"
)

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
