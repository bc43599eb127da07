package foxglove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// Options configures a Server.
type Options struct {
	// Bus and Exec are where the server subscribes; message timestamps
	// and time messages come from Exec's clock (required).
	Bus  bus.Bus
	Exec *executor.Executor
	// Gateway is the WebSocket API whose command handlers serve client
	// publish and whose management handlers serve services; nil offers
	// neither.
	Gateway *ws.Gateway
	// Auth checks the API token; nil, or Required() false, lets every
	// client in (Listen then allows loopback addresses only).
	Auth ws.Authenticator
	// Guard throttles wrong tokens per address; the server passes the
	// one its other listeners use. Nil makes one for this server.
	Guard *auth.Guard
	// AllowedOrigins are browser origins allowed besides the server's own
	// host and Foxglove's web app (https://app.foxglove.dev).
	AllowedOrigins []string
	// Topics are the filters advertised (default every topic).
	Topics []string
	// Encoding chooses each topic's channel encoding and schema, as for
	// recordings; nil means record.DefaultEncoding.
	Encoding func(topic string) record.Encoding
	// Name is the serverInfo name (default "saint-os").
	Name string
	// TimeInterval is how often time messages go out (default 100 ms).
	TimeInterval time.Duration
	// SendQueue is each client's queue of message frames (default 1024);
	// when it is full, further messages to that client are dropped and
	// counted until it catches up.
	SendQueue int
	// CallTimeout bounds one command or service call (default 10 s).
	CallTimeout time.Duration
	// OnDemand are the topics that carry messages only while clients
	// subscribe to them. Register defaults it to the head camera
	// (HeadCamera) when the gateway has its command.
	OnDemand []Demand
	// Params are the parameters clients get, set and subscribe to
	// (Foxglove's Parameters panel). Register defaults them to
	// DefaultParams of the gateway; none leaves the capability out.
	Params []ParamSource
	// ParamInterval is how often the parameters are read again while a
	// client is subscribed to them (default DefaultParamInterval).
	ParamInterval time.Duration
	Log           *slog.Logger
}

// foxgloveOrigins are the Foxglove web app's origins, allowed by default.
var foxgloveOrigins = []string{"https://app.foxglove.dev", "https://studio.foxglove.dev"}

// Server serves the Foxglove WebSocket protocol. Lifecycle: New, Start
// (subscribes), Listen or ServeHTTP, Shutdown — or Register on a
// saint-server, which runs all of that.
type Server struct {
	o        Options
	upgrader websocket.Upgrader
	session  string
	services []serviceDef

	mu       sync.Mutex
	channels map[string]*channel
	byID     map[uint32]*channel
	nextID   uint32
	clients  map[*client]struct{}
	// clientSeq numbers the clients (client.id).
	clientSeq atomic.Uint64
	subs      []bus.Subscription
	timer     *executor.Timer
	// authTimer rechecks the clients' tokens, so a regenerated token
	// disconnects the clients of the old one.
	authTimer *executor.Timer
	// demandTimer repeats the switch-on of subscribed on-demand topics
	// that carry nothing (recheckDemands).
	demandTimer *executor.Timer
	http        *http.Server
	ln          net.Listener
	stopped     bool

	// watched holds channel.watched by on-demand topic; the map is made
	// in New and only read after, by wants on publishing goroutines.
	watched map[string]*atomic.Bool
	// demandMu serialises switching on-demand topics on and off.
	demandMu sync.Mutex
	// done ends the on-demand topics' forwarders (forwarders) at stop.
	done       chan struct{}
	forwarders sync.WaitGroup

	params paramState
}

type channel struct {
	Channel
	encode func([]byte) ([]byte, error)
	// encodeValue encodes a message that came as a value (bus.Msg.Value:
	// a camera frame published in process); nil: through its JSON.
	encodeValue func(any) ([]byte, error)
	subs        map[*client]uint32
	// demand is set for an on-demand topic; demanded (demandMu) is
	// whether it was last switched on.
	demand   *Demand
	demanded bool
	// watched, for an on-demand topic, is whether a client subscribes to
	// it: the server takes the topic's messages off the bus only then.
	watched *atomic.Bool
	// latest, for an on-demand topic, holds its newest message for the
	// goroutine that encodes and sends it off the executor (forwardLatest).
	latest chan stamped
	// lastMsg (s.mu) is when the on-demand topic last carried a message;
	// retrying (s.mu) is set while a switch-on is being repeated.
	lastMsg  time.Time
	retrying bool
	// lastSent (s.mu) is the executor time of the last message queued
	// for sending, when sent; for Demand.MaxRate.
	lastSent uint64
	sent     bool
}

// stamped is a bus message's payload (JSON, or a value in process) and
// its executor time.
type stamped struct {
	data []byte
	val  any
	ns   uint64
}

// valueTypes are the message types the server takes as values in process
// (bus.SubscribeValuesOf) rather than as JSON: camera frames, whose JSON
// (base64 pixels) the publisher would make on its executor for this
// server alone, in milliseconds, and this server would read back in
// tens of milliseconds, to turn into CDR that is a header and the pixels.
func valueTypes() []reflect.Type { return []reflect.Type{reflect.TypeFor[msg.Image]()} }

// encodeMsg turns a message, its JSON (data) or its value (val), into the
// channel's encoding.
func (ch *channel) encodeMsg(data []byte, val any) ([]byte, error) {
	if val != nil {
		if ch.encodeValue != nil {
			return ch.encodeValue(val)
		}
		var err error
		if data, err = json.Marshal(val); err != nil {
			return nil, err
		}
	}
	if ch.encode != nil {
		return ch.encode(data)
	}
	return data, nil
}

// New checks o.
func New(o Options) (*Server, error) {
	if o.Bus == nil || o.Exec == nil {
		return nil, errors.New("foxglove: Options.Bus and Options.Exec are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Guard == nil {
		o.Guard = auth.NewGuard(auth.GuardOptions{Log: o.Log})
	}
	if len(o.Topics) == 0 {
		o.Topics = []string{record.AllTopics}
	}
	if o.Encoding == nil {
		o.Encoding = record.DefaultEncoding
	}
	if o.Name == "" {
		o.Name = "saint-os"
	}
	if o.TimeInterval == 0 {
		o.TimeInterval = 100 * time.Millisecond
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 1024
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	for i, d := range o.OnDemand {
		if d.Topic == "" || d.Set == nil {
			return nil, fmt.Errorf("foxglove: Options.OnDemand[%d] needs a Topic and a Set", i)
		}
	}
	s := &Server{o: o, channels: map[string]*channel{}, byID: map[uint32]*channel{}, nextID: 1, clients: map[*client]struct{}{}, done: make(chan struct{}),
		session: strconv.FormatInt(time.Now().UnixNano(), 36)}
	s.upgrader = websocket.Upgrader{Subprotocols: []string{Subprotocol}, CheckOrigin: s.checkOrigin,
		ReadBufferSize: 4096, WriteBufferSize: 64 << 10}
	s.services = s.serviceDefs()
	s.watched = map[string]*atomic.Bool{}
	for _, d := range o.OnDemand {
		s.watched[d.Topic] = new(atomic.Bool)
	}
	return s, nil
}

// Start subscribes to the bus and starts the time messages. Call it from a
// goroutine other than the one running Exec, which must be running.
func (s *Server) Start(ctx context.Context) error {
	var err error
	if derr := s.o.Exec.Do(ctx, func() { err = s.start() }); derr != nil {
		return derr
	}
	return err
}

// start subscribes, advertises the on-demand topics and arms the timers
// (executor).
func (s *Server) start() error {
	s.mu.Lock()
	for i := range s.o.OnDemand {
		d := &s.o.OnDemand[i]
		if _, known := s.channels[d.Topic]; known {
			continue
		}
		if ch := s.addChannel(d.Topic, demandFirst); ch != nil {
			ch.demand, ch.latest, ch.watched = d, make(chan stamped, 1), s.watched[d.Topic]
			s.forwarders.Add(1)
			go s.forwardLatest(ch, s.done)
		}
	}
	s.mu.Unlock()
	for _, t := range s.o.Topics {
		sub, err := bus.SubscribeValuesOfWanted(s.o.Bus, t, bus.QoS{Reliability: bus.BestEffort, Depth: 256}, s.o.Exec, s.handle, s.wants, valueTypes()...)
		if err != nil {
			s.stop()
			return fmt.Errorf("foxglove: %w", err)
		}
		s.subs = append(s.subs, sub)
	}
	if s.o.TimeInterval > 0 {
		s.timer = s.o.Exec.Every(s.o.TimeInterval, s.sendTime)
	}
	s.authTimer = s.o.Exec.Every(time.Second, s.recheckTokens)
	if len(s.o.OnDemand) > 0 {
		s.demandTimer = s.o.Exec.Every(time.Second, s.recheckDemands)
	}
	s.startParams()
	return nil
}

// wants reports whether the server takes topic's messages off the bus
// (on the publisher's goroutine): an on-demand topic's (a 0.9 MB camera
// frame, copied for this server) only while a client subscribes to it.
func (s *Server) wants(topic string) bool {
	w, ok := s.watched[topic]
	return !ok || w.Load()
}

// stop unsubscribes and stops the timers (executor).
func (s *Server) stop() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
	for _, t := range []*executor.Timer{s.timer, s.authTimer, s.demandTimer} {
		if t != nil {
			t.Stop()
		}
	}
	s.timer, s.authTimer, s.demandTimer = nil, nil, nil
	s.stopParams()
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.forwarders.Wait()
}

// Register adds a Foxglove server to the saint-server's feature host: it
// takes the host's bus, executor, gateway (commands and services) and
// logger where o leaves them nil, starts and stops with the server, and
// closes its clients when the server shuts down. The server serves it
// (ServeHTTP) on its Foxglove listener.
func Register(h *feature.Host, o Options) (*Server, error) {
	if o.Bus == nil {
		o.Bus = h.Bus
	}
	if o.Exec == nil {
		o.Exec = h.Exec
	}
	if o.Gateway == nil {
		o.Gateway = h.Gateway
	}
	if o.Log == nil {
		o.Log = h.Log
	}
	if o.OnDemand == nil && o.Gateway != nil && o.Gateway.Lookup("command", "head", "camera") != nil {
		o.OnDemand = []Demand{HeadCamera(o.Gateway)}
	}
	if o.Params == nil && o.Gateway != nil {
		o.Params = DefaultParams(o.Gateway)
	}
	s, err := New(o)
	if err != nil {
		return nil, err
	}
	h.Add(feature.Funcs{OnStart: s.start, OnStop: s.stop})
	h.OnClose(s.closeClients)
	return s, nil
}

// RegisterTransforms adds PublishTransforms to the server's feature
// host, running while the server runs.
func RegisterTransforms(h *feature.Host) {
	var stop func()
	h.Add(feature.Funcs{
		OnStart: func() (err error) {
			stop, err = PublishTransforms(h.Bus, h.Exec)
			return err
		},
		OnStop: func() {
			if stop != nil {
				stop()
			}
		},
	})
}

// Listen serves the protocol on addr ("127.0.0.1:8765"; port 0 picks a
// free port) and returns the bound address. Without authentication it
// refuses addresses beyond loopback.
func (s *Server) Listen(addr string) (string, error) {
	if !s.authRequired() && !auth.LoopbackOnly(addr) {
		return "", fmt.Errorf("foxglove: authentication is off, so the Foxglove server may listen on loopback only; %s is not", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("foxglove: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	s.mu.Lock()
	s.ln, s.http = ln, srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	s.o.Log.Info("listening", "service", "foxglove", "addr", ln.Addr().String())
	return ln.Addr().String(), nil
}

// Shutdown closes the listener and every client and unsubscribes. Call it
// from a goroutine other than Exec's.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.http
	s.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
	}
	s.closeClients()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.o.Exec.Do(ctx, s.stop)
}

// closeClients disconnects every client and refuses new ones.
func (s *Server) closeClients() {
	s.mu.Lock()
	s.stopped = true
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	for _, c := range clients {
		c.close()
	}
}

func (s *Server) authRequired() bool { return s.o.Auth != nil && s.o.Auth.Required() }

func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser
	}
	if u, err := url.Parse(origin); err == nil && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return slices.Contains(foxgloveOrigins, origin) || slices.Contains(s.o.AllowedOrigins, origin)
}

// token is the API token of a request: a bearer header or ?token=.
func token(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) > len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		return strings.TrimSpace(h[len(prefix):])
	}
	return r.URL.Query().Get("token")
}

// ServeHTTP upgrades a request to a Foxglove WebSocket connection.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "this is a Foxglove WebSocket server: connect with subprotocol "+Subprotocol, http.StatusBadRequest)
		return
	}
	if !slices.Contains(websocket.Subprotocols(r), Subprotocol) {
		http.Error(w, "unsupported WebSocket subprotocol: this server speaks "+Subprotocol, http.StatusBadRequest)
		return
	}
	tok := token(r)
	if s.authRequired() {
		ok := false
		if tok != "" {
			v := s.o.Guard.Check(auth.RemoteHost(r), "foxglove", tok, s.o.Auth.Valid)
			if v.RetryAfter > 0 {
				auth.Refuse(w, v)
				return
			}
			ok = v.OK
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="saint", error="invalid_token"`)
			http.Error(w, "unauthorized: give the API token as ?token=TOKEN or an Authorization: Bearer header", http.StatusUnauthorized)
			return
		}
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered (403 for a foreign origin)
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	c := &client{s: s, id: s.clientSeq.Add(1), conn: conn, addr: host, token: tok, ctrl: make(chan frame, 256), data: make(chan []byte, s.o.SendQueue),
		done: make(chan struct{}), subs: map[uint32]*channel{}, pubs: map[uint32]clientChannel{}}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.clients[c] = struct{}{}
	// The greeting goes out under the lock, so no advertise of a channel
	// appearing meanwhile is lost or comes before it.
	c.sendJSON(s.serverInfo())
	if chs := s.channelList(); len(chs) > 0 {
		c.sendJSON(advertise{Op: "advertise", Channels: chs})
	}
	if len(s.services) > 0 {
		c.sendJSON(s.advertiseServices())
	}
	s.mu.Unlock()
	s.o.Log.Info("Foxglove client connected", "source", "foxglove", "addr", host)
	go c.writeLoop()
	c.readLoop()
	c.close()
	s.mu.Lock()
	delete(s.clients, c)
	var demanded []*channel
	for _, ch := range c.subs {
		delete(ch.subs, c)
		if ch.demand != nil {
			demanded = append(demanded, ch)
		}
	}
	s.mu.Unlock()
	for _, ch := range demanded {
		_ = s.applyDemand(ch)
	}
	s.o.Log.Info("Foxglove client disconnected", "source", "foxglove", "addr", host, "dropped", c.dropped.Load())
}

func (s *Server) serverInfo() serverInfo {
	caps := []string{"time"}
	var encs []string
	if s.o.Gateway != nil {
		caps = append(caps, "clientPublish", "services")
		encs = []string{"json"}
	}
	if len(s.o.Params) > 0 {
		caps = append(caps, "parameters", "parametersSubscribe")
	}
	return serverInfo{Op: "serverInfo", Name: s.o.Name, Capabilities: caps, SupportedEncodings: encs, SessionID: s.session,
		Metadata: map[string]string{"commands": CommandPrefix + "<target>/<action>"}}
}

// channelList lists the channels by id (s.mu held).
func (s *Server) channelList() []Channel {
	out := make([]Channel, 0, len(s.byID))
	for _, ch := range s.byID {
		out = append(out, ch.Channel)
	}
	slices.SortFunc(out, func(a, b Channel) int { return int(a.ID) - int(b.ID) })
	return out
}

// Channels lists the channels advertised so far.
func (s *Server) Channels() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.channelList()
}

// handle fans a bus message out to the subscribed clients (executor). A
// topic's first message advertises its channel to every client.
func (s *Server) handle(m bus.Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, known := s.channels[m.Topic]
	if !known {
		first := m.Data
		if v := m.Value(); v != nil {
			// A value on a topic not yet known (not the camera, which
			// is advertised from the start): its JSON, once, to
			// describe the channel.
			var err error
			if first, err = json.Marshal(v); err != nil {
				s.o.Log.Warn("foxglove: topic not offered", "topic", m.Topic, "err", err)
				s.channels[m.Topic] = nil
				return
			}
		}
		ch = s.addChannel(m.Topic, first)
	}
	if ch != nil && ch.demand != nil {
		ch.lastMsg = s.o.Exec.Now()
	}
	if ch == nil || len(ch.subs) == 0 {
		return
	}
	ns := uint64(s.o.Exec.Now().UnixNano())
	if ch.latest != nil {
		if r := ch.demand.MaxRate; r > 0 {
			if ch.sent && float64(ns-ch.lastSent) < 1e9/r {
				return
			}
			ch.sent, ch.lastSent = true, ns
		}
		// An on-demand topic (the camera: a 640×480 frame is 0.9 MB)
		// is encoded off the executor, newest message first: one
		// waiting is replaced by this newer one. A frame published in
		// process comes as a copy of its own (m.Value), which nothing
		// else touches, so the encoder may read it after the publisher
		// has moved on to its next frame.
		f := stamped{m.Data, m.Value(), ns}
		select {
		case ch.latest <- f:
		default:
			select {
			case <-ch.latest:
			default:
			}
			select {
			case ch.latest <- f:
			default:
			}
		}
		return
	}
	data, err := ch.encodeMsg(m.Data, m.Value())
	if err != nil {
		s.o.Log.Warn("foxglove: message not encodable", "topic", m.Topic, "err", err)
		return
	}
	for c, subID := range ch.subs {
		c.sendData(messageData(subID, ns, data))
	}
}

// forwardLatest encodes an on-demand channel's newest message and sends it
// to the channel's subscribers, until done.
func (s *Server) forwardLatest(ch *channel, done <-chan struct{}) {
	defer s.forwarders.Done()
	for {
		var f stamped
		select {
		case <-done:
			return
		case f = <-ch.latest:
		}
		data, err := ch.encodeMsg(f.data, f.val)
		if err != nil {
			s.o.Log.Warn("foxglove: message not encodable", "topic", ch.Topic, "err", err)
			continue
		}
		s.mu.Lock()
		for c, subID := range ch.subs {
			c.sendData(messageData(subID, f.ns, data))
		}
		s.mu.Unlock()
	}
}

// addChannel makes topic a channel and advertises it (s.mu held). A
// topic its encoding cannot describe is remembered as nil and not offered.
func (s *Server) addChannel(topic string, first []byte) *channel {
	spec, err := s.o.Encoding(topic).Channel(topic, first)
	if err != nil {
		s.o.Log.Warn("foxglove: topic not offered", "topic", topic, "err", err)
		s.channels[topic] = nil
		return nil
	}
	ch := &channel{Channel: Channel{ID: s.nextID, Topic: topic, Encoding: spec.MessageEncoding, SchemaName: spec.SchemaName,
		Schema: string(spec.Schema), SchemaEncoding: spec.SchemaEncoding}, encode: spec.Encode, encodeValue: spec.EncodeValue,
		subs: map[*client]uint32{}}
	s.nextID++
	s.channels[topic] = ch
	s.byID[ch.ID] = ch
	adv := advertise{Op: "advertise", Channels: []Channel{ch.Channel}}
	for c := range s.clients {
		c.sendJSON(adv)
	}
	return ch
}

// recheckTokens disconnects clients whose token is no longer valid (the
// token was regenerated, or authentication turned on): they must
// reconnect with the current one (executor).
func (s *Server) recheckTokens() {
	if !s.authRequired() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		if !c.authorized() {
			c.status(levelError, "the API token changed: reconnect with the new token")
			c.closeSoon()
		}
	}
}

// sendTime sends every client the executor's time (executor).
func (s *Server) sendTime() {
	f := timeFrame(uint64(s.o.Exec.Now().UnixNano()))
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		c.sendData(f)
	}
}

// Stats is a snapshot of the server's clients and channels.
type Stats struct {
	Clients  int
	Channels int
	Dropped  uint64
}

// Stats reports how many clients and channels there are and how many
// message frames were dropped for slow clients.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Clients: len(s.clients), Channels: len(s.byID)}
	for c := range s.clients {
		st.Dropped += c.dropped.Load()
	}
	return st
}

// marshal encodes a control message; the types here always encode.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("foxglove: " + err.Error())
	}
	return b
}
