package foxglove

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/server/ws"
)

// CommandPrefix begins the topics clients publish commands on:
// CommandPrefix + "head/move" is the WebSocket API's head move command.
const CommandPrefix = "/saint/command/"

// publishCommands are the WebSocket API commands clients may publish:
// the robot-control commands, which go through the router. System power
// commands and the balance console stay on the WebSocket API, where the
// caller is a known session.
var publishCommands = map[string]bool{
	"head/move": true, "head/home": true, "head/camera": true,
	"arms/move": true, "arms/home": true, "arms/gripper": true, "arms/move_pose": true,
	"tracks/drive": true, "tracks/stop": true, "tracks/estop": true,
	"system/estop": true,
}

// maxClientMessage bounds a client's message (commands and service
// requests are small).
const maxClientMessage = 1 << 20

type client struct {
	s     *Server
	id    uint64 // for ws.CallerOf: "foxglove client ID"
	conn  *websocket.Conn
	addr  string
	token string // the API token the client connected with
	// ctrl carries JSON messages, which are never dropped (a client too
	// slow to take them is disconnected); data carries binary frames,
	// dropped when the client falls behind.
	ctrl      chan frame
	data      chan []byte
	done      chan struct{}
	closeOnce sync.Once
	dropped   atomic.Uint64

	// subs are the client's subscriptions by id (s.mu).
	subs map[uint32]*channel
	// pubs are the channels the client advertised, by id (read loop).
	pubs map[uint32]clientChannel
}

// authorized reports whether the client's token is still good.
func (c *client) authorized() bool {
	return !c.s.authRequired() || c.s.o.Auth.Valid(c.token)
}

// closeSoon closes the connection after what is queued for it (the
// status saying why) has had a moment to go out.
func (c *client) closeSoon() {
	time.AfterFunc(200*time.Millisecond, c.close)
}

func (c *client) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.conn.Close()
	})
}

// frame is a control message: JSON, or a binary service response.
type frame struct {
	binary bool
	b      []byte
}

// sendJSON queues a JSON control message.
func (c *client) sendJSON(v any) { c.sendCtrl(frame{b: marshal(v)}) }

// sendCtrl queues a control message.
func (c *client) sendCtrl(f frame) {
	select {
	case c.ctrl <- f:
	case <-c.done:
	default:
		c.s.o.Log.Warn("Foxglove client too slow; disconnecting", "source", "foxglove", "addr", c.addr)
		c.close()
	}
}

// sendData queues a binary frame, or drops it when the client is behind.
func (c *client) sendData(b []byte) {
	select {
	case c.data <- b:
	default:
		c.dropped.Add(1)
	}
}

func (c *client) status(level int, format string, args ...any) {
	c.sendJSON(status{Op: "status", Level: level, Message: fmt.Sprintf(format, args...)})
}

func (c *client) writeLoop() {
	defer c.close()
	write := func(typ int, b []byte) bool {
		_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		return c.conn.WriteMessage(typ, b) == nil
	}
	writeCtrl := func(f frame) bool {
		if f.binary {
			return write(websocket.BinaryMessage, f.b)
		}
		return write(websocket.TextMessage, f.b)
	}
	for {
		// Control messages first: an advertise must precede the data of
		// its channel.
		select {
		case f := <-c.ctrl:
			if !writeCtrl(f) {
				return
			}
			continue
		default:
		}
		select {
		case <-c.done:
			return
		case f := <-c.ctrl:
			if !writeCtrl(f) {
				return
			}
		case b := <-c.data:
			if !write(websocket.BinaryMessage, b) {
				return
			}
		}
	}
}

func (c *client) readLoop() {
	c.conn.SetReadLimit(maxClientMessage)
	for {
		typ, b, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		if typ == websocket.TextMessage {
			c.handleJSON(b)
		} else {
			c.handleBinary(b)
		}
	}
}

func (c *client) handleJSON(b []byte) {
	var m clientOp
	if err := json.Unmarshal(b, &m); err != nil {
		c.status(levelError, "malformed JSON message: %v", err)
		return
	}
	switch m.Op {
	case "subscribe":
		c.subscribe(m.Subscriptions)
	case "unsubscribe":
		c.unsubscribe(m.SubscriptionIDs)
	case "advertise":
		c.advertise(m.Channels)
	case "unadvertise":
		c.unadvertise(m.ChannelIDs)
	case "getParameters", "setParameters", "subscribeParameterUpdates", "unsubscribeParameterUpdates":
		c.handleParams(m.Op, b)
	case "":
		c.status(levelError, "message without \"op\"")
	default:
		c.status(levelError, "unsupported op %q (this server offers subscribe, unsubscribe, advertise, unadvertise, service calls and the parameter ops)", m.Op)
	}
}

func (c *client) subscribe(raw json.RawMessage) {
	var subs []subscription
	if err := json.Unmarshal(raw, &subs); err != nil || len(subs) == 0 {
		c.status(levelError, "subscribe: \"subscriptions\" must be a non-empty array of {\"id\", \"channelId\"}")
		return
	}
	s := c.s
	var demanded []*channel
	defer func() { // after the unlock: switching waits for the executor
		for _, ch := range demanded {
			if err := s.applyDemand(ch); err != nil {
				c.status(levelWarning, "subscribe: %s carries messages only on demand and could not be started: %s", ch.Topic, errorText(err))
			}
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sub := range subs {
		switch {
		case sub.ID == nil || sub.ChannelID == nil:
			c.status(levelError, "subscribe: subscriptions[%d] needs both \"id\" and \"channelId\"", i)
			continue
		case c.subs[*sub.ID] != nil:
			c.status(levelError, "subscribe: subscription id %d is already in use", *sub.ID)
			continue
		}
		ch := s.byID[*sub.ChannelID]
		if ch == nil {
			c.status(levelError, "subscribe: unknown channel id %d", *sub.ChannelID)
			continue
		}
		if old, ok := ch.subs[c]; ok {
			c.status(levelError, "subscribe: channel %d (%s) is already subscribed as subscription %d", ch.ID, ch.Topic, old)
			continue
		}
		ch.subs[c] = *sub.ID
		c.subs[*sub.ID] = ch
		if ch.demand != nil {
			demanded = append(demanded, ch)
		}
	}
}

func (c *client) unsubscribe(raw json.RawMessage) {
	var ids []uint32
	if err := json.Unmarshal(raw, &ids); err != nil {
		c.status(levelError, "unsubscribe: \"subscriptionIds\" must be an array of subscription ids")
		return
	}
	s := c.s
	var demanded []*channel
	defer func() {
		for _, ch := range demanded {
			_ = s.applyDemand(ch)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		ch := c.subs[id]
		if ch == nil {
			c.status(levelWarning, "unsubscribe: no subscription %d", id)
			continue
		}
		delete(ch.subs, c)
		delete(c.subs, id)
		if ch.demand != nil {
			demanded = append(demanded, ch)
		}
	}
}

// commandTarget splits a client channel's topic into the WebSocket API
// command it carries: "/saint/command/head/move" is ("head", "move").
func commandTarget(topic string) (target, action string, ok bool) {
	rest, found := strings.CutPrefix(topic, CommandPrefix)
	if !found {
		return "", "", false
	}
	target, action, ok = strings.Cut(rest, "/")
	return target, action, ok && publishCommands[target+"/"+action]
}

func (c *client) advertise(raw json.RawMessage) {
	var chs []clientChannel
	if err := json.Unmarshal(raw, &chs); err != nil || len(chs) == 0 {
		c.status(levelError, "advertise: \"channels\" must be a non-empty array of {\"id\", \"topic\", \"encoding\", \"schemaName\"}")
		return
	}
	g := c.s.o.Gateway
	if g == nil {
		c.status(levelError, "advertise: this server does not take client publishing")
		return
	}
	for i, ch := range chs {
		if ch.ID == nil {
			c.status(levelError, "advertise: channels[%d] has no \"id\"", i)
			continue
		}
		if _, dup := c.pubs[*ch.ID]; dup {
			c.status(levelError, "advertise: client channel %d is already advertised", *ch.ID)
			continue
		}
		target, action, ok := commandTarget(ch.Topic)
		if !ok || g.Lookup("command", target, action) == nil {
			// Foxglove's panels advertise topics of their own (the 3D
			// panel: /clicked_point, /initialpose, /move_base_simple/goal)
			// whether or not the user ever publishes there; the channel is
			// taken, and what is published on it refused.
			ch.refusal = fmt.Sprintf("topic %q is not a command; publish on %s<target>/<action>, e.g. %shead/move",
				ch.Topic, CommandPrefix, CommandPrefix)
			c.pubs[*ch.ID] = ch
			continue
		}
		if ch.Encoding != "json" {
			c.status(levelError, "advertise: client channel %d (%s): encoding %q is not supported, use \"json\"", *ch.ID, ch.Topic, ch.Encoding)
			continue
		}
		c.pubs[*ch.ID] = ch
	}
}

func (c *client) unadvertise(raw json.RawMessage) {
	var ids []uint32
	if err := json.Unmarshal(raw, &ids); err != nil {
		c.status(levelError, "unadvertise: \"channelIds\" must be an array of channel ids")
		return
	}
	for _, id := range ids {
		if _, ok := c.pubs[id]; !ok {
			c.status(levelWarning, "unadvertise: client channel %d was not advertised", id)
			continue
		}
		delete(c.pubs, id)
	}
}

func (c *client) handleBinary(b []byte) {
	if len(b) == 0 {
		c.status(levelError, "empty binary message")
		return
	}
	switch b[0] {
	case opClientMessageData:
		c.publish(b)
	case opServiceCallRequest:
		c.callService(b)
	default:
		c.status(levelError, "binary message with unknown opcode 0x%02x (client message data is 0x01, service call request 0x02)", b[0])
	}
}

// publish runs a client message as its command. Commands of one client
// run in arrival order, as on the WebSocket API.
func (c *client) publish(b []byte) {
	if len(b) < 5 {
		c.status(levelError, "client message data: %d bytes, want at least 5 (opcode and uint32 channel id)", len(b))
		return
	}
	id := binary.LittleEndian.Uint32(b[1:])
	ch, ok := c.pubs[id]
	if !ok {
		c.status(levelError, "client message data: channel %d was not advertised (advertise it first)", id)
		return
	}
	if ch.refusal != "" {
		c.status(levelError, "client message data: channel %d: %s; nothing was sent", id, ch.refusal)
		return
	}
	if !c.authorized() {
		c.status(levelError, "%s: the API token changed: reconnect with the new token; nothing was sent", ch.Topic)
		return
	}
	payload := b[5:]
	if !json.Valid(payload) || !bytes.HasPrefix(bytes.TrimSpace(payload), []byte("{")) {
		c.status(levelError, "%s: message is not a JSON object (the command's params, e.g. {\"pan\": 30})", ch.Topic)
		return
	}
	target, action, _ := commandTarget(ch.Topic)
	h := c.s.o.Gateway.Lookup("command", target, action)
	if h == nil {
		c.status(levelError, "%s: no such command", ch.Topic)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.s.o.CallTimeout)
	defer cancel()
	if _, err := c.run(ctx, h, json.RawMessage(payload)); err != nil {
		c.status(levelError, "%s: %s", ch.Topic, errorText(err))
	}
}

// run calls a gateway handler as the client ("foxglove client ID" to
// ws.CallerOf, gone when it disconnects: a head camera it turned on by
// publishing is released then), turning a panic into an error so that a
// handler's bug costs one request, not the server.
func (c *client) run(ctx context.Context, h ws.Handler, params json.RawMessage) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.s.o.Log.Error("foxglove: handler panicked", "source", "foxglove", "panic", p)
			res, err = nil, fmt.Errorf("internal error")
		}
	}()
	return h(ws.WithCaller(ctx, ws.Caller{Name: "foxglove client " + strconv.FormatUint(c.id, 10), Done: c.done}), nil, params)
}

// errorText is a handler error as the WebSocket API would put it: the
// parameter at fault, then what is wrong.
func errorText(err error) string {
	var we *ws.Error
	if errors.As(err, &we) {
		if we.Field != "" {
			return we.Field + ": " + we.Message
		}
		return we.Message
	}
	return err.Error()
}
