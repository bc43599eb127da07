// Package wsclienttest wraps wsclient for tests: a client closed when the
// test ends, calls bounded in time whose answers decode into a value, and
// a variant that fails the test on an error answer.
package wsclienttest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/saint-os/saint/server/ws/wsclient"
)

// CallTimeout bounds one call: an answer later than this is a failure, not
// a measurement.
const CallTimeout = 15 * time.Second

// Client is a WebSocket API client bound to a test.
type Client struct {
	*wsclient.Client
	t testing.TB
}

// Dial connects to url with token ("" for none) and closes the connection
// when the test ends; a refused connection fails the test.
func Dial(t testing.TB, url, token string) *Client {
	t.Helper()
	c, err := wsclient.DialOptions(context.Background(), url, token, wsclient.Options{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Client{Client: c, t: t}
}

// Call calls action (typ "command" with target, or a type such as
// "management", "router", "rc" with target "") and decodes the answer's
// data into out unless out is nil. An error answer is a *wsclient.CallError.
func (c *Client) Call(typ, target, action string, params, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	defer cancel()
	data, err := c.Client.Call(ctx, typ, target, action, params)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// OK is Call, failing the test on any error.
func (c *Client) OK(typ, target, action string, params, out any) {
	c.t.Helper()
	if err := c.Call(typ, target, action, params, out); err != nil {
		c.t.Fatalf("%s %s %s: %v", typ, target, action, err)
	}
}

// Next returns the next state update on topic (one subscribed to),
// skipping others, and fails the test if none comes within timeout or the
// connection ends.
func (c *Client) Next(topic string, timeout time.Duration) wsclient.Update {
	c.t.Helper()
	expire := time.NewTimer(timeout)
	defer expire.Stop()
	for {
		select {
		case u, ok := <-c.Updates():
			if !ok {
				c.t.Fatalf("no %s update: the connection ended: %v", topic, c.Err())
			}
			if u.Topic == topic {
				return u
			}
		case <-expire.C:
			c.t.Fatalf("no %s update within %v", topic, timeout)
		}
	}
}
