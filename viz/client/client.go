package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"
)

// Update is one state update: the topic ("node" in the message), the
// server's timestamp (s) and the data.
type Update struct {
	Topic     string
	Timestamp float64
	Data      json.RawMessage
}

// Client is one API connection. Its methods are safe for concurrent use.
type Client struct {
	conn    *websocket.Conn
	writeMu sync.Mutex
	nextID  atomic.Uint64
	updates chan Update
	done    chan struct{}

	mu      sync.Mutex
	lastErr string
	dropped uint64
	readErr error
}

// UpdateBuffer is how many updates wait for the reader before new ones are
// dropped (counted by Dropped): a stalled window must not stall the
// connection.
const UpdateBuffer = 1024

// Dial connects to url ("ws://HOST:PORT/saint"), with token as the bearer
// token when it is not empty.
func Dial(ctx context.Context, url, token string) (*Client, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("client: connecting to %s: %w (HTTP %s)", url, err, resp.Status)
		}
		return nil, fmt.Errorf("client: connecting to %s: %w", url, err)
	}
	c := &Client{conn: conn, updates: make(chan Update, UpdateBuffer), done: make(chan struct{})}
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
	ID        json.RawMessage `json:"id"`
}

func (c *Client) read() {
	defer close(c.done)
	defer close(c.updates)
	for {
		var e envelope
		if err := c.conn.ReadJSON(&e); err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		switch {
		case e.Type == "state":
			select {
			case c.updates <- Update{Topic: e.Node, Timestamp: e.Timestamp, Data: e.Data}:
			default:
				c.mu.Lock()
				c.dropped++
				c.mu.Unlock()
			}
		case e.Type == "response" && e.Status == "error":
			c.mu.Lock()
			c.lastErr = e.Message
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

// LastError is the message of the last error response, "" if none.
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

func (c *Client) send(v map[string]any) error {
	v["id"] = "viz-" + strconv.FormatUint(c.nextID.Add(1), 10)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.conn.WriteJSON(v); err != nil {
		return fmt.Errorf("client: sending %v %v: %w", v["type"], v["action"], err)
	}
	return nil
}

// Subscribe subscribes to topics at most rateHz updates a second each
// (0: every update).
func (c *Client) Subscribe(topics []string, rateHz float64) error {
	return c.send(map[string]any{"type": "subscribe", "topics": topics, "rate_hz": rateHz})
}

// Command sends a robot-control command; an error answer shows in
// LastError.
func (c *Client) Command(target, action string, params map[string]any) error {
	m := map[string]any{"type": "command", "target": target, "action": action}
	if params != nil {
		m["params"] = params
	}
	return c.send(m)
}

// Close closes the connection and waits for the reader to end.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}
