package foxglove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/saint-os/saint/hal/executor"
)

// ParamSource is a group of parameters Foxglove clients read and set
// (Options.Params): the server's settings, the adopted nodes' names, the
// router's blending, the RC receiver's settings. Its calls run off the executor (they may wait for
// it) and may run concurrently with the gateway's own requests.
type ParamSource interface {
	// Params returns the current values by full parameter name
	// ("/server.livelink.data_port"), each one JSON value.
	Params(ctx context.Context) (map[string]json.RawMessage, error)
	// SetParam sets a parameter that Params returned to value (one JSON
	// value). Its error says what is wrong with the value.
	SetParam(ctx context.Context, name string, value json.RawMessage) error
}

// DefaultParamInterval is how often, by the executor's clock, the
// parameters are read again while a client is subscribed to updates, so
// a change made elsewhere (the web UI) reaches Foxglove.
const DefaultParamInterval = time.Second

// parameter is one entry of parameterValues and of setParameters. Value
// is absent for a parameter that no longer exists (the spec's unset).
type parameter struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
	Type  string          `json:"type,omitempty"`
}

type parameterValues struct {
	Op         string      `json:"op"`
	Parameters []parameter `json:"parameters"`
	ID         string      `json:"id,omitempty"`
}

// paramRequest is getParameters, setParameters,
// subscribeParameterUpdates or unsubscribeParameterUpdates.
type paramRequest struct {
	ParameterNames []string    `json:"parameterNames"`
	Parameters     []parameter `json:"parameters"`
	ID             *string     `json:"id"`
}

// paramState is what the server keeps of the parameters.
type paramState struct {
	// mu serialises reading the sources and comparing with last, so
	// that every change is reported once and in order; it is never held
	// with s.mu held.
	mu sync.Mutex
	// last (mu) is every parameter's value at the last read, and owner
	// (mu) the source it came from; nil before the first read.
	last  map[string]json.RawMessage
	owner map[string]ParamSource
	// subs (s.mu) are each client's parameter subscriptions; polling
	// (s.mu) is set while a read started by the timer runs.
	subs    map[*client]map[string]bool
	polling bool
	timer   *executor.Timer
}

// startParams arms the timer that reads the parameters again while
// clients are subscribed to them (executor).
func (s *Server) startParams() {
	if len(s.o.Params) == 0 {
		return
	}
	every := s.o.ParamInterval
	if every <= 0 {
		every = DefaultParamInterval
	}
	s.params.timer = s.o.Exec.Every(every, s.pollParams)
}

// stopParams stops that timer (executor).
func (s *Server) stopParams() {
	if s.params.timer != nil {
		s.params.timer.Stop()
		s.params.timer = nil
	}
}

// paramSubscribers returns whether a connected client is subscribed to a
// parameter, forgetting the subscriptions of clients gone (s.mu held).
func (s *Server) paramSubscribers() bool {
	found := false
	for c, names := range s.params.subs {
		if _, on := s.clients[c]; !on {
			delete(s.params.subs, c)
			continue
		}
		found = found || len(names) > 0
	}
	return found
}

// pollParams starts a read of the parameters when a client is subscribed
// to them and none is running (executor). The read runs on a goroutine of
// its own: the sources wait for the executor.
func (s *Server) pollParams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.params.polling || s.stopped || !s.paramSubscribers() {
		return
	}
	s.params.polling = true
	done := s.done
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.o.CallTimeout)
		defer cancel()
		// The server stopping ends the read rather than leave it
		// waiting for an executor that may be gone.
		go func() {
			select {
			case <-done:
				cancel()
			case <-ctx.Done():
			}
		}()
		_, _, _ = s.readParams(ctx)
		s.mu.Lock()
		s.params.polling = false
		s.mu.Unlock()
	}()
}

// readParams reads every source, tells the subscribers of what changed
// since the last read, and returns the values and their sources. A source
// that fails keeps its last values (its parameters are not reported as
// gone); the sources' errors are returned with the values.
func (s *Server) readParams(ctx context.Context) (map[string]json.RawMessage, map[string]ParamSource, error) {
	p := &s.params
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := map[string]json.RawMessage{}
	owner := map[string]ParamSource{}
	var errs []error
	for _, src := range s.o.Params {
		vals, err := s.sourceParams(ctx, src)
		if err != nil {
			errs = append(errs, err)
			s.o.Log.Warn("foxglove: parameters not read", "source", "foxglove", "err", err)
			for name, o := range p.owner {
				if o == src {
					cur[name], owner[name] = p.last[name], src
				}
			}
			continue
		}
		for name, v := range vals {
			cur[name], owner[name] = v, src
		}
	}
	if p.last != nil {
		var changed []parameter
		for name, v := range cur {
			if old, ok := p.last[name]; !ok || string(old) != string(v) {
				changed = append(changed, parameter{Name: name, Value: v})
			}
		}
		for name := range p.last {
			if _, ok := cur[name]; !ok {
				changed = append(changed, parameter{Name: name})
			}
		}
		if len(changed) > 0 {
			s.notifyParams(changed)
		}
	}
	p.last, p.owner = cur, owner
	return cur, owner, errors.Join(errs...)
}

// notifyParams sends each subscriber the changed parameters it is
// subscribed to.
func (s *Server) notifyParams(changed []parameter) {
	sort.Slice(changed, func(i, j int) bool { return changed[i].Name < changed[j].Name })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paramSubscribers()
	for c, names := range s.params.subs {
		var mine []parameter
		for _, p := range changed {
			if names[p.Name] {
				mine = append(mine, p)
			}
		}
		if len(mine) > 0 {
			c.sendJSON(parameterValues{Op: "parameterValues", Parameters: mine})
		}
	}
}

// sourceParams calls src.Params, turning a panic into an error.
func (s *Server) sourceParams(ctx context.Context, src ParamSource) (vals map[string]json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.o.Log.Error("foxglove: parameter source panicked", "source", "foxglove", "panic", p)
			vals, err = nil, fmt.Errorf("internal error")
		}
	}()
	return src.Params(ctx)
}

// setParam calls src.SetParam, turning a panic into an error.
func (s *Server) setParam(ctx context.Context, src ParamSource, name string, value json.RawMessage) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.o.Log.Error("foxglove: parameter source panicked", "source", "foxglove", "panic", p)
			err = fmt.Errorf("internal error")
		}
	}()
	return src.SetParam(ctx, name, value)
}

// handleParams runs one of the parameter ops, b being the whole message.
func (c *client) handleParams(op string, b []byte) {
	if len(c.s.o.Params) == 0 {
		c.status(levelError, "unsupported op %q: this server offers no parameters", op)
		return
	}
	var req paramRequest
	if err := json.Unmarshal(b, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			c.status(levelError, "%s: %q: want %s, got %s", op, te.Field, paramRequestField(te.Field), te.Value)
		} else {
			c.status(levelError, "%s: %v", op, err)
		}
		return
	}
	if !c.authorized() {
		c.status(levelError, "%s: the API token changed: reconnect with the new token", op)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.s.o.CallTimeout)
	defer cancel()
	switch op {
	case "getParameters":
		c.getParameters(ctx, req)
	case "setParameters":
		c.setParameters(ctx, req)
	case "subscribeParameterUpdates":
		c.subscribeParameters(ctx, req.ParameterNames)
	case "unsubscribeParameterUpdates":
		c.unsubscribeParameters(req.ParameterNames)
	}
}

// paramRequestField says what a field of a parameter op must be.
func paramRequestField(field string) string {
	switch {
	case field == "id":
		return "a string"
	case strings.HasPrefix(field, "parameterNames"):
		return "an array of parameter names"
	case strings.HasPrefix(field, "parameters"):
		return `an array of {"name", "value"}`
	}
	return "another type"
}

// reply answers a getParameters or setParameters: the values of names
// that exist, with the request's id.
func (c *client) replyParams(vals map[string]json.RawMessage, names []string, id *string) {
	out := parameterValues{Op: "parameterValues", Parameters: []parameter{}}
	for _, n := range names {
		if v, ok := vals[n]; ok {
			out.Parameters = append(out.Parameters, parameter{Name: n, Value: v})
		}
	}
	if id != nil {
		out.ID = *id
	}
	c.sendJSON(out)
}

// sortedNames returns the names of vals, sorted.
func sortedNames(vals map[string]json.RawMessage) []string {
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (c *client) getParameters(ctx context.Context, req paramRequest) {
	vals, _, err := c.s.readParams(ctx)
	if err != nil {
		c.status(levelWarning, "getParameters: some parameters could not be read (their last values are given): %v", err)
	}
	names := req.ParameterNames
	if len(names) == 0 {
		names = sortedNames(vals)
	}
	var unknown []string
	for _, n := range names {
		if _, ok := vals[n]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
	}
	if len(unknown) > 0 {
		c.status(levelWarning, "getParameters: no parameter %s (an empty parameterNames lists them all)", strings.Join(unknown, ", "))
	}
	c.replyParams(vals, names, req.ID)
}

// setParameters sets each parameter through its source, which checks it
// as the WebSocket API does; a refused one is reported in an error
// status naming it and why, and the others are still set. The answer
// (when the request has an id) has the values after the change, so a
// client that showed its new value at once sees a refused one go back.
func (c *client) setParameters(ctx context.Context, req paramRequest) {
	if len(req.Parameters) == 0 {
		c.status(levelError, `setParameters: "parameters" must be a non-empty array of {"name", "value"}`)
		return
	}
	_, owner, _ := c.s.readParams(ctx)
	names := make([]string, 0, len(req.Parameters))
	for i, p := range req.Parameters {
		if p.Name == "" {
			c.status(levelError, "setParameters: parameters[%d] has no \"name\"", i)
			continue
		}
		names = append(names, p.Name)
		src := owner[p.Name]
		var why string
		switch {
		case src == nil:
			why = "no such parameter (getParameters with an empty parameterNames lists them all)"
		case len(p.Value) == 0 || string(p.Value) == "null":
			why = "a value is required: parameters of this server cannot be unset"
		case p.Type == "byte_array" || p.Type == "float64_array":
			why = fmt.Sprintf("type %q is not a type of this parameter (a number, a boolean or a string)", p.Type)
		case p.Type != "" && p.Type != "float64":
			why = fmt.Sprintf("unknown type %q (want none, float64, float64_array or byte_array)", p.Type)
		default:
			if err := c.s.setParam(ctx, src, p.Name, p.Value); err != nil {
				why = errorText(err)
			}
		}
		if why != "" {
			c.status(levelError, "setParameters: %s: %s; not set", p.Name, why)
		}
	}
	vals, _, _ := c.s.readParams(ctx)
	if req.ID != nil {
		c.replyParams(vals, names, req.ID)
	}
}

func (c *client) subscribeParameters(ctx context.Context, names []string) {
	// Read first: the subscription starts from the current values, and
	// changes made before it are told to the subscribers of then.
	vals, _, _ := c.s.readParams(ctx)
	if len(names) == 0 {
		names = sortedNames(vals)
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.params.subs == nil {
		s.params.subs = map[*client]map[string]bool{}
	}
	mine := s.params.subs[c]
	if mine == nil {
		mine = map[string]bool{}
		s.params.subs[c] = mine
	}
	for _, n := range names {
		// A name not (yet) known is kept: a node adopted later brings
		// its parameters, and their first value is an update.
		mine[n] = true
	}
}

func (c *client) unsubscribeParameters(names []string) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(names) == 0 {
		delete(s.params.subs, c)
		return
	}
	mine := s.params.subs[c]
	for _, n := range names {
		delete(mine, n)
	}
}
