package activity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// TopicLogs is the WebSocket topic that carries each new event. It is an
// event topic: every event is delivered, whatever the client's rate_hz.
const TopicLogs = "logs"

// logFeature is the activity log as the API offers it.
type logFeature struct {
	log *Log
	// streams are the open /api/logs follow connections, closed when the
	// server shuts down.
	streamMu sync.Mutex
	streams  map[chan struct{}]struct{}
}

// Register offers l on h: the management command get_activity_log, the
// "logs" topic, and GET /api/logs behind the API token (see serveLogs).
func Register(h *feature.Host, l *Log) {
	f := &logFeature{log: l}
	h.Gateway.Handle("management", "get_activity_log", f.getActivityLog)
	h.Topics(TopicLogs)
	h.Gateway.SetEventTopics(TopicLogs)
	h.HandleHTTP("GET /api/logs", http.HandlerFunc(f.serveLogs))
	// Follow streams end before the listeners wait for their requests.
	h.OnClose(f.closeStreams)
	var cancel func()
	h.Add(feature.Funcs{
		OnStart: func() error {
			cancel = l.Subscribe(func(e Event) { h.Gateway.Publish(TopicLogs, e) })
			return nil
		},
		OnStop: func() {
			if cancel != nil {
				cancel()
				cancel = nil
			}
		},
	})
}

// activityLogParams are get_activity_log's parameters (limit, offset,
// level, source; node, search and after_seq added for the Logs
// page's filters and live view).
type activityLogParams struct {
	Limit    *int    `json:"limit"`
	Offset   int     `json:"offset"`
	Level    *string `json:"level"`
	Source   *string `json:"source"`
	Node     *string `json:"node"`
	Search   *string `json:"search"`
	AfterSeq uint64  `json:"after_seq"`
}

// MaxLogLimit is the most events one get_activity_log returns.
const MaxLogLimit = 1000

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// parseLogFilter checks get_activity_log's parameters.
func parseLogFilter(raw json.RawMessage) (Filter, error) {
	var p activityLogParams
	if err := ws.DecodeParams(raw, &p); err != nil {
		return Filter{}, err
	}
	f := Filter{Limit: 100, Offset: p.Offset, Level: str(p.Level), Source: str(p.Source),
		Node: str(p.Node), Search: str(p.Search), AfterSeq: p.AfterSeq}
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > MaxLogLimit {
			return f, ws.ParamError("limit", "want 1 to %d, got %d", MaxLogLimit, *p.Limit)
		}
		f.Limit = *p.Limit
	}
	if p.Offset < 0 {
		return f, ws.ParamError("offset", "want 0 or more, got %d", p.Offset)
	}
	if f.Level != "" {
		if _, err := ParseLevel(f.Level); err != nil {
			return f, ws.ParamError("level", "%v", err)
		}
	}
	return f, nil
}

func (f *logFeature) getActivityLog(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	flt, err := parseLogFilter(raw)
	if err != nil {
		return nil, err
	}
	events, total := f.log.Query(flt)
	return map[string]any{"events": events, "total": total, "limit": flt.Limit, "offset": flt.Offset}, nil
}

// serveLogs is GET /api/logs (behind authentication):
//
//   - ?download=1 sends every event the log files hold (both tiers,
//     merged by sequence number), oldest first, as one NDJSON attachment
//     (activity.log);
//   - otherwise the newest matching events (limit, offset, level, source,
//     node, search, after_seq as get_activity_log) as NDJSON, oldest
//     first; with follow=1 the response stays open and each new matching
//     event follows as its own line (chunked transfer). A client that
//     sends "Accept: text/event-stream" gets the same events as
//     Server-Sent Events ("id: SEQ", "data: EVENT"), and a
//     Last-Event-ID header resumes after that sequence number.
func (f *logFeature) serveLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("download") == "1" || q.Get("download") == "true" {
		f.downloadLogs(w)
		return
	}
	raw := map[string]any{}
	for _, k := range []string{"level", "source", "node", "search"} {
		if v := q.Get(k); v != "" {
			raw[k] = v
		}
	}
	for _, k := range []string{"limit", "offset", "after_seq"} {
		if v := q.Get(k); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				http.Error(w, fmt.Sprintf("%s: want a whole number, got %q", k, v), http.StatusBadRequest)
				return
			}
			raw[k] = n
		}
	}
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if id := r.Header.Get("Last-Event-ID"); sse && id != "" {
		if n, err := strconv.ParseUint(id, 10, 64); err == nil {
			raw["after_seq"] = n
		}
	}
	params, _ := json.Marshal(raw)
	flt, err := parseLogFilter(params)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	follow := q.Get("follow") == "1" || q.Get("follow") == "true" || sse

	// Subscribe before reading the backlog so nothing falls between.
	live := make(chan Event, 256)
	overflow := make(chan struct{})
	var overflowOnce sync.Once
	if follow {
		cancel := f.log.Subscribe(func(e Event) {
			if !flt.Match(e) {
				return
			}
			select {
			case live <- e:
			default:
				overflowOnce.Do(func() { close(overflow) })
			}
		})
		defer cancel()
	}
	backlog, _ := f.log.Query(flt)
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	var last uint64
	write := func(e Event) error {
		if e.Seq <= last {
			return nil
		}
		last = e.Seq
		b, _ := json.Marshal(e)
		var err error
		if sse {
			_, err = fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.Seq, b)
		} else {
			_, err = w.Write(append(b, '\n'))
		}
		return err
	}
	for i := len(backlog) - 1; i >= 0; i-- {
		if write(backlog[i]) != nil {
			return
		}
	}
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	if !follow {
		return
	}
	done := f.openStream()
	defer f.closeStream(done)
	for {
		select {
		case e := <-live:
			if write(e) != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		case <-overflow:
			// The reader is too slow for the log: end the stream; it can
			// resume with after_seq (or Last-Event-ID).
			return
		case <-r.Context().Done():
			return
		case <-done:
			return
		}
	}
}

func (f *logFeature) downloadLogs(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="activity.log"`)
	_ = f.log.Export(w)
}

func (f *logFeature) openStream() chan struct{} {
	f.streamMu.Lock()
	defer f.streamMu.Unlock()
	if f.streams == nil {
		f.streams = map[chan struct{}]struct{}{}
	}
	ch := make(chan struct{})
	f.streams[ch] = struct{}{}
	return ch
}

func (f *logFeature) closeStream(ch chan struct{}) {
	f.streamMu.Lock()
	defer f.streamMu.Unlock()
	if _, ok := f.streams[ch]; ok {
		delete(f.streams, ch)
		close(ch)
	}
}

// closeStreams ends every follow stream (shutdown: http.Server.Shutdown
// would otherwise wait for them).
func (f *logFeature) closeStreams() {
	f.streamMu.Lock()
	defer f.streamMu.Unlock()
	for ch := range f.streams {
		close(ch)
		delete(f.streams, ch)
	}
}
