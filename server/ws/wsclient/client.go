package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/server/ws"
)

// Update is one state update: the topic ("node" in the message), the
// server's timestamp (s) and the data.
type Update struct {
	Topic     string
	Timestamp float64
	Data      json.RawMessage
}

// Options tunes a Client.
type Options struct {
	// Name prefixes the ids of the client's requests ("viz" sends viz-1,
	// viz-2, …), so that the server's logs say whose they were. Default
	// "client".
	Name string
	// Header is sent with the upgrade request, besides the token's
	// Authorization (a test's Origin or X-Forwarded-For).
	Header http.Header
}

// Client is one API connection. Its methods are safe for concurrent use.
type Client struct {
	conn    *websocket.Conn
	name    string
	writeMu sync.Mutex
	nextID  atomic.Uint64
	updates chan Update
	done    chan struct{}

	mu      sync.Mutex
	pending map[string]chan answerMsg // Call's and Do's answers, by request id
	lastErr string
	dropped uint64
	readErr error
}

// UpdateBuffer is how many updates wait for the reader before new ones are
// dropped (counted by Dropped): a stalled window must not stall the
// connection.
const UpdateBuffer = 1024

// DialError is a refused connection: the HTTP status of a refused upgrade
// (0 when there was no answer) and, for 429, the seconds to wait
// (Retry-After).
type DialError struct {
	URL        string
	Status     int
	StatusText string
	RetryAfter string
	Err        error
}

func (e *DialError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("client: connecting to %s: %v (HTTP %s)", e.URL, e.Err, e.StatusText)
	}
	return fmt.Sprintf("client: connecting to %s: %v", e.URL, e.Err)
}

func (e *DialError) Unwrap() error { return e.Err }

// Dial connects to url ("ws://HOST:PORT/saint"), with token as the bearer
// token when it is not empty. A refused connection is a *DialError.
func Dial(ctx context.Context, url, token string) (*Client, error) {
	return DialOptions(ctx, url, token, Options{})
}

// DialOptions is Dial with options.
func DialOptions(ctx context.Context, url, token string, o Options) (*Client, error) {
	h := http.Header{}
	for k, v := range o.Header {
		h[k] = v
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, h)
	if err != nil {
		de := &DialError{URL: url, Err: err}
		if resp != nil {
			de.Status, de.StatusText, de.RetryAfter = resp.StatusCode, resp.Status, resp.Header.Get("Retry-After")
		}
		return nil, de
	}
	if o.Name == "" {
		o.Name = "client"
	}
	c := &Client{conn: conn, name: o.Name, updates: make(chan Update, UpdateBuffer), done: make(chan struct{}),
		pending: map[string]chan answerMsg{}}
	go c.read()
	return c, nil
}

// envelope is every message the server sends.
type envelope struct {
	Type      string          `json:"type"`
	Node      string          `json:"node"`
	Timestamp float64         `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	Status    string          `json:"status"`
	Message   string          `json:"message"`
	Error     *ws.ErrorBody   `json:"error"`
	ID        json.RawMessage `json:"id"`
}

// answerMsg is an answer as read: decoded, and as it came.
type answerMsg struct {
	envelope
	raw []byte
}

func (c *Client) read() {
	defer close(c.done)
	defer close(c.updates)
	for {
		var e envelope
		_, raw, err := c.conn.ReadMessage()
		if err == nil {
			err = json.Unmarshal(raw, &e)
		}
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		switch e.Type {
		case "state":
			select {
			case c.updates <- Update{Topic: e.Node, Timestamp: e.Timestamp, Data: e.Data}:
			default:
				c.mu.Lock()
				c.dropped++
				c.mu.Unlock()
			}
		case "response":
			var id string
			_ = json.Unmarshal(e.ID, &id)
			c.mu.Lock()
			if ch, ok := c.pending[id]; ok {
				delete(c.pending, id)
				ch <- answerMsg{e, raw}
			} else if e.Status == "error" {
				c.lastErr = e.Message
			}
			c.mu.Unlock()
		}
	}
}

// Updates delivers state updates; it is closed when the connection ends.
func (c *Client) Updates() <-chan Update { return c.updates }

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, nil while it is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// LastError is the message of the last error answer to a request nobody
// waited for (Command, Subscribe), "" if none.
func (c *Client) LastError() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Dropped counts updates dropped because nobody read Updates.
func (c *Client) Dropped() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

func (c *Client) send(v map[string]any) (string, error) {
	id := c.name + "-" + strconv.FormatUint(c.nextID.Add(1), 10)
	v["id"] = id
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.conn.WriteJSON(v); err != nil {
		return "", fmt.Errorf("client: sending %v %v: %w", v["type"], v["action"], err)
	}
	return id, nil
}

// Subscribe subscribes to topics at most rateHz updates a second each
// (0: every update).
func (c *Client) Subscribe(topics []string, rateHz float64) error {
	_, err := c.send(map[string]any{"type": "subscribe", "topics": topics, "rate_hz": rateHz})
	return err
}

// Command sends a robot-control command without waiting for its answer;
// an error answer shows in LastError.
func (c *Client) Command(target, action string, params map[string]any) error {
	m := map[string]any{"type": "command", "target": target, "action": action}
	if params != nil {
		m["params"] = params
	}
	_, err := c.send(m)
	return err
}

// CallError is an error answer: the server's code, the parameter at
// fault (if one is) and its message.
type CallError struct {
	Code, Field, Message string
}

func (e *CallError) Error() string { return e.Message }

// Call sends a request of type typ ("management", "router", "rc", …; for
// "command", target names the output) and waits for its answer, until
// ctx ends. It returns the answer's data, or a *CallError for an error
// answer. Nil params send {}.
func (c *Client) Call(ctx context.Context, typ, target, action string, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	req := map[string]any{"type": typ, "action": action, "params": params}
	if target != "" {
		req["target"] = target
	}
	a, err := c.roundTrip(ctx, req, typ+" "+action)
	if err != nil {
		return nil, err
	}
	return answer(a.envelope)
}

// Do sends req as it is (the client adds only its id) and returns the
// whole answer, whatever its status: for tools that pass requests through,
// such as a scenario's ws events.
func (c *Client) Do(ctx context.Context, req map[string]any) (map[string]any, error) {
	body := make(map[string]any, len(req)+1)
	for k, v := range req {
		body[k] = v
	}
	a, err := c.roundTrip(ctx, body, fmt.Sprintf("%v %v", req["type"], req["action"]))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(a.raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// roundTrip sends req with the next id and waits for its answer until ctx
// ends; what names the request in errors.
func (c *Client) roundTrip(ctx context.Context, req map[string]any, what string) (answerMsg, error) {
	ch := make(chan answerMsg, 1)
	id := c.name + "-" + strconv.FormatUint(c.nextID.Add(1), 10)
	req["id"] = id
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	c.writeMu.Lock()
	err := c.conn.WriteJSON(req)
	c.writeMu.Unlock()
	if err != nil {
		return answerMsg{}, fmt.Errorf("client: sending %s: %w", what, err)
	}
	select {
	case a := <-ch:
		return a, nil
	case <-c.done:
		// The reader hands over an answer before it ends: one that came
		// just before the connection closed is here.
		select {
		case a := <-ch:
			return a, nil
		default:
		}
		if err := c.Err(); err != nil {
			return answerMsg{}, fmt.Errorf("client: %s: connection ended: %w", what, err)
		}
		return answerMsg{}, errors.New("client: connection ended")
	case <-ctx.Done():
		return answerMsg{}, fmt.Errorf("client: %s: %w", what, ctx.Err())
	}
}

// answer turns a response into Call's result.
func answer(e envelope) (json.RawMessage, error) {
	if e.Status != "ok" {
		ce := &CallError{Message: e.Message}
		if e.Error != nil {
			ce.Code, ce.Field = e.Error.Code, e.Error.Field
			if ce.Message == "" {
				ce.Message = e.Error.Message
			}
		}
		return nil, ce
	}
	return e.Data, nil
}

// Close closes the connection and waits for the reader to end.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}
