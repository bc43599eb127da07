package ws

import (
	"context"
	"strconv"
)

// Caller is who made a request, for handlers that keep something for
// each of the server's users until that user goes away: a claim on the
// head camera, say, which a browser tab that died must not keep forever.
// The zero Caller is an anonymous one that never goes away.
type Caller struct {
	// Name tells the caller apart from the server's other users
	// ("websocket client 12", "foxglove"); empty for an anonymous caller.
	Name string
	// Done is closed when the caller goes away (its connection closed);
	// nil for a caller that does not go away by itself.
	Done <-chan struct{}
}

type callerKey struct{}

// WithCaller returns ctx carrying c, for code outside the gateway that
// calls a Handler on behalf of a user of its own (the Foxglove server
// for its clients): CallerOf then names c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns who made a request a Handler was called with: the
// WebSocket client c when it is not nil ("websocket client ID", gone when
// its connection closes), else the Caller WithCaller put in ctx, else the
// zero Caller.
func CallerOf(ctx context.Context, c *Client) Caller {
	if c != nil {
		return Caller{Name: "websocket client " + strconv.FormatUint(c.id, 10), Done: c.done}
	}
	caller, _ := ctx.Value(callerKey{}).(Caller)
	return caller
}
