package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// DefaultServiceDepth is how many requests may wait for a service's
// handler when Options.ServiceDepth is 0.
const DefaultServiceDepth = 64

// DefaultCallTimeout is the CallAsync timeout used when the given one is
// not positive. A call always has a deadline, so that a server that
// vanished mid-call cannot leave a caller waiting forever.
const DefaultCallTimeout = 5 * time.Second

// Options configures a Conn. A nil *Options means the zero value, which is
// ready to use.
type Options struct {
	// Logger receives the errors nobody else can be told about: a reply
	// that could not be encoded or sent, a message SubscribeJSON could not
	// decode. Nil means slog.Default().
	Logger *slog.Logger
	// ServiceDepth bounds how many requests wait for one service handler.
	// Requests beyond it are refused at once (the caller gets a
	// *RemoteError) rather than queued without bound or left to time out.
	// 0 means DefaultServiceDepth.
	ServiceDepth int
}

// Conn is a Bus built on a Transport: it maps names to subjects, encodes
// JSON, keeps each subscription's keep-last queue, runs handlers on their
// executors, wraps service replies in an envelope and measures call
// timeouts on the caller's executor. Backends (mem, natsbus) supply only the
// Transport, so they all behave alike.
//
// A Conn is safe for concurrent use. Handlers run on the executor they were
// registered with, one at a time.
type Conn struct {
	t            Transport
	log          *slog.Logger
	serviceDepth int

	mu     sync.Mutex
	closed bool
	nextID uint64
	queues map[uint64]*queue
	calls  map[uint64]*call
	isDown atomic.Bool // mirrors closed for the lock-free Publish path

	plans plans // how to copy the types published in process

	subjects  sync.Map // topic → subject, for Publish
	nSubjects atomic.Int64
}

var _ Bus = (*Conn)(nil)

// NewConn returns a Bus over t. The Conn owns t: Close closes it.
func NewConn(t Transport, opts *Options) *Conn {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ServiceDepth <= 0 {
		o.ServiceDepth = DefaultServiceDepth
	}
	return &Conn{
		t:            t,
		log:          o.Logger,
		serviceDepth: o.ServiceDepth,
		queues:       make(map[uint64]*queue),
		calls:        make(map[uint64]*call),
	}
}

// Transport returns the transport the Conn runs on.
func (c *Conn) Transport() Transport { return c.t }

// Logger returns the Conn's logger; the typed helpers log through it.
func (c *Conn) Logger() *slog.Logger { return c.log }

// Publish implements Bus. It returns once the transport has taken the
// message; with an in-process transport every subscriber has queued it by
// then.
func (c *Conn) Publish(topic string, v any) error {
	if c.isDown.Load() {
		return ErrClosed
	}
	subject, err := c.subject(topic)
	if err != nil {
		return err
	}
	if ip, ok := c.t.(InProcess); ok {
		p := &Publication{v: v, plans: &c.plans}
		if err := ip.PublishValue(subject, p); err != nil {
			if p.err != nil {
				return fmt.Errorf("bus: encoding %s: %w", topic, p.err)
			}
			return fmt.Errorf("bus: publishing %s: %w", topic, err)
		}
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("bus: encoding %s: %w", topic, err)
	}
	if err := c.t.Publish(subject, "", data); err != nil {
		return fmt.Errorf("bus: publishing %s: %w", topic, err)
	}
	return nil
}

// subject is TopicSubject(topic, false), remembered: a process publishes
// to a few dozen topics, thousands of times a second.
func (c *Conn) subject(topic string) (string, error) {
	if s, ok := c.subjects.Load(topic); ok {
		return s.(string), nil
	}
	s, err := TopicSubject(topic, false)
	if err == nil && c.nSubjects.Add(1) <= maxSubjects {
		c.subjects.Store(topic, s)
	}
	return s, err
}

// maxSubjects bounds the topics a Conn remembers the subjects of.
const maxSubjects = 4096

// Subscribe implements Bus. topic may be a filter with "+" and a final "#".
// qos.Depth 0 means DefaultDepth. Reliable and BestEffort are delivered the
// same way by the transports in this repository: every message reaches the
// queue, and only the keep-last queue drops; the distinction is kept for
// backends (DDS) that act on it.
//
// The returned Subscription implements StatsReporter.
func (c *Conn) Subscribe(topic string, qos QoS, ex *executor.Executor, h Handler) (Subscription, error) {
	if c.isDown.Load() {
		return nil, ErrClosed
	}
	subject, wildcard, err := toSubject("topic", topic, true, "")
	if err != nil {
		return nil, err
	}
	if ex == nil || h == nil {
		return nil, fmt.Errorf("bus: subscribing %s: nil executor or handler", topic)
	}
	depth := qos.Depth
	switch {
	case depth == 0:
		depth = DefaultDepth
	case depth < 0:
		return nil, fmt.Errorf("bus: subscribing %s: negative depth %d", topic, depth)
	}
	q := newQueue(c, topic, wildcard, depth, ex, func(it item) { h(it.msg) })
	q.typ, q.types, q.wants = qos.typ, qos.types, qos.wants
	if err := c.start(q, subject, false); err != nil {
		return nil, fmt.Errorf("bus: subscribing %s: %w", topic, err)
	}
	return q, nil
}

// Serve implements Bus. Requests queue for h on ex in arrival order, at most
// Options.ServiceDepth of them; the reply passed to h may be called once
// from any goroutine, later calls are ignored.
//
// service may have wildcards as a Subscribe filter does
// ("/saint/nodes/+/validate_role"): one handler then answers every name
// it matches, and each request's Msg.Topic is the name it was sent to
// ("/saint/nodes/n1/validate_role"). Calls always name one service.
//
// A service should have one server. If two serve the same name, both handle
// each request and the caller takes whichever answer arrives first.
//
// The returned Subscription implements StatsReporter.
func (c *Conn) Serve(service string, ex *executor.Executor, h ServiceHandler) (Subscription, error) {
	if c.isDown.Load() {
		return nil, ErrClosed
	}
	subject, wildcard, err := toSubject("service", service, true, serviceToken+".")
	if err != nil {
		return nil, err
	}
	if ex == nil || h == nil {
		return nil, fmt.Errorf("bus: serving %s: nil executor or handler", service)
	}
	q := newQueue(c, service, wildcard, c.serviceDepth, ex, func(it item) {
		if it.reply == "" {
			// Nobody to answer: not a request made by a Conn.
			return
		}
		var once atomic.Bool
		h(it.msg, func(resp any, err error) {
			if once.CompareAndSwap(false, true) {
				c.reply(service, it.reply, resp, err)
			}
		})
	})
	q.refuse = func(it item) {
		if it.reply != "" {
			c.reply(service, it.reply, nil, errBusy)
		}
	}
	if err := c.start(q, subject, true); err != nil {
		return nil, fmt.Errorf("bus: serving %s: %w", service, err)
	}
	return q, nil
}

var errBusy = errors.New("bus: service busy, too many requests waiting")

// start subscribes q on the transport, as a served service's requests
// when service is set, and registers it for Close.
func (c *Conn) start(q *queue, subject string, service bool) error {
	var tsub Subscription
	var err error
	st, isServiceTransport := c.t.(ServiceTransport)
	if service && isServiceTransport {
		tsub, err = st.SubscribeService(subject, q.deliver)
	} else if ip, ok := c.t.(InProcess); ok && q.typ != nil {
		tsub, err = ip.SubscribeValue(subject, q.deliver, q.deliverValue)
	} else {
		tsub, err = c.t.Subscribe(subject, q.deliver)
	}
	if err != nil {
		return err
	}
	q.tsub = tsub
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		q.shut()
		tsub.Unsubscribe()
		return ErrClosed
	}
	c.nextID++
	q.id = c.nextID
	c.queues[q.id] = q
	c.mu.Unlock()
	return nil
}

// forget drops an unsubscribed queue from the Close list.
func (c *Conn) forget(q *queue) {
	c.mu.Lock()
	delete(c.queues, q.id)
	c.mu.Unlock()
}

// reply sends a service's answer in the reply envelope.
func (c *Conn) reply(service, subject string, resp any, herr error) {
	data, err := encodeReply(resp, herr)
	if err != nil {
		c.log.Error("bus: cannot encode service response", "service", service, "err", err)
		data, _ = encodeReply(nil, fmt.Errorf("bus: encoding response: %w", err))
	}
	if c.isDown.Load() {
		return
	}
	if st, ok := c.t.(ServiceTransport); ok {
		err = st.Reply(subject, data)
	} else {
		err = c.t.Publish(subject, "", data)
	}
	// A refused reply subject is the transport's to count and report, in
	// aggregate: a flood of them must not flood the log.
	if err != nil && !errors.Is(err, ErrReplyRefused) {
		c.log.Warn("bus: cannot send service response", "service", service, "err", err)
	}
}

// Call implements Bus. Errors: *RemoteError from the handler; an error
// wrapping ErrNoResponders, ErrClosed, or ErrTimeout together with
// context.DeadlineExceeded when ctx's deadline passes; ctx.Err() wrapped
// when ctx is cancelled.
func (c *Conn) Call(ctx context.Context, service string, req, resp any) error {
	subject, data, err := c.prepareCall(service, req)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ctxError(service, err)
	}
	type outcome struct {
		data []byte
		err  error
	}
	ch := make(chan outcome, 1)
	cl := &call{complete: func(data []byte, err error) {
		select {
		case ch <- outcome{data, err}:
		default: // an earlier outcome won
		}
	}}
	if !c.track(cl) {
		return fmt.Errorf("%w: %s", ErrClosed, service)
	}
	defer c.untrack(cl)
	var hint time.Duration
	if dl, ok := ctx.Deadline(); ok {
		// A deadline that passed since ctx.Err was checked gives a
		// negative or zero wait; 0 means "no timeout given" to a
		// transport, so the smallest real timeout stands in for it.
		hint = max(time.Until(dl), time.Nanosecond)
	}
	cancel, err := c.t.Request(subject, data, hint, cl.complete)
	if err != nil {
		return fmt.Errorf("bus: calling %s: %w", service, err)
	}
	defer cancel()
	select {
	case o := <-ch:
		if o.err != nil {
			return callError(service, o.err)
		}
		m, err := decodeReply(service, o.data)
		if err != nil || resp == nil {
			return err
		}
		return m.Decode(resp)
	case <-ctx.Done():
		return ctxError(service, ctx.Err())
	}
}

// ctxError is a Call's error when its context ends first: a passed deadline
// is a timeout like CallAsync's (and still context.DeadlineExceeded).
func ctxError(service string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: %w", ErrTimeout, service, err)
	}
	return fmt.Errorf("bus: calling %s: %w", service, err)
}

// CallAsync implements Bus. done runs on ex exactly once, with the
// response, or with an error as Call returns them; the timeout is an
// ex.After timer, so on a virtual clock it fires at exactly the call's
// virtual time plus timeout. A timeout <= 0 means DefaultCallTimeout.
// CallAsync panics if ex or done is nil.
func (c *Conn) CallAsync(service string, req any, timeout time.Duration, ex *executor.Executor, done func(Msg, error)) {
	if ex == nil || done == nil {
		panic("bus: CallAsync needs an executor and a done func")
	}
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	subject, data, err := c.prepareCall(service, req)
	if err != nil {
		ex.Post(func() { done(Msg{}, err) })
		return
	}
	cl := &call{c: c, service: service, done: done}
	// Every outcome goes through the executor; the first to run wins.
	cl.complete = func(data []byte, err error) {
		ex.Post(func() { cl.finish(data, err) })
	}
	if !c.track(cl) {
		ex.Post(func() { done(Msg{}, fmt.Errorf("%w: %s", ErrClosed, service)) })
		return
	}
	cl.mu.Lock()
	cl.timer = ex.After(timeout, func() { cl.finish(nil, ErrTimeout) })
	cl.mu.Unlock()

	cancel, err := c.t.Request(subject, data, timeout, cl.complete)
	if err != nil {
		cl.complete(nil, fmt.Errorf("bus: calling %s: %w", service, err))
		return
	}
	cl.mu.Lock()
	finished := cl.finished
	cl.cancel = cancel
	cl.mu.Unlock()
	if finished {
		cancel()
	}
}

// prepareCall checks a call's name and encodes its request.
func (c *Conn) prepareCall(service string, req any) (subject string, data []byte, err error) {
	subject, err = ServiceSubject(service)
	if err != nil {
		return "", nil, err
	}
	data, err = json.Marshal(req)
	if err != nil {
		return "", nil, fmt.Errorf("bus: encoding request to %s: %w", service, err)
	}
	return subject, data, nil
}

// call is a request in flight, tracked so that Close can end it.
type call struct {
	id       uint64
	complete func(data []byte, err error) // any goroutine; may be called more than once

	// CallAsync only; finish and the fields below belong to its executor.
	c       *Conn
	service string
	done    func(Msg, error)

	mu       sync.Mutex
	finished bool
	cancel   func()
	timer    *executor.Timer
}

// finish runs on the caller's executor; only the first outcome counts.
func (cl *call) finish(data []byte, err error) {
	cl.mu.Lock()
	if cl.finished {
		cl.mu.Unlock()
		return
	}
	cl.finished = true
	cancel, timer := cl.cancel, cl.timer
	cl.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if cancel != nil {
		cancel()
	}
	cl.c.untrack(cl)
	var m Msg
	if err != nil {
		err = callError(cl.service, err)
	} else {
		m, err = decodeReply(cl.service, data)
	}
	cl.done(m, err)
}

func (c *Conn) track(cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.nextID++
	cl.id = c.nextID
	c.calls[cl.id] = cl
	return true
}

func (c *Conn) untrack(cl *call) {
	c.mu.Lock()
	delete(c.calls, cl.id)
	c.mu.Unlock()
}

// callError names the service in the bare sentinel errors transports and
// timers produce, keeping the sentinel for errors.Is.
func callError(service string, err error) error {
	if err == ErrNoResponders || err == ErrTimeout || err == ErrClosed {
		return fmt.Errorf("%w: %s", err, service)
	}
	return err
}

// Close implements Bus. It ends every subscription and served service
// (queued messages are discarded), fails every call in flight with
// ErrClosed (CallAsync's done still runs, on its executor), then closes the
// transport. Later calls return ErrClosed; closing again does nothing.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.isDown.Store(true)
	queues, calls := c.queues, c.calls
	c.queues, c.calls = nil, nil
	c.mu.Unlock()

	// In creation order, so that a virtual-clock run sees the same ErrClosed
	// callbacks in the same order every time.
	for _, id := range slices.Sorted(maps.Keys(queues)) {
		q := queues[id]
		if q.shut() {
			q.tsub.Unsubscribe()
		}
	}
	for _, id := range slices.Sorted(maps.Keys(calls)) {
		calls[id].complete(nil, ErrClosed)
	}
	return c.t.Close()
}
