package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/saint-os/saint/server/activity"
)

// serveLogs is GET /api/logs (behind authentication):
//
//   - ?download=1 sends every log file, oldest first, as one NDJSON
//     attachment (activity.log);
//   - otherwise the newest matching events (limit, offset, level, source,
//     node, search, after_seq as get_activity_log) as NDJSON, oldest
//     first; with follow=1 the response stays open and each new matching
//     event follows as its own line (chunked transfer). A client that
//     sends "Accept: text/event-stream" gets the same events as
//     Server-Sent Events ("id: SEQ", "data: EVENT"), and a
//     Last-Event-ID header resumes after that sequence number.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("download") == "1" || q.Get("download") == "true" {
		s.downloadLogs(w)
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
	f, err := parseLogFilter(params)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	follow := q.Get("follow") == "1" || q.Get("follow") == "true" || sse

	// Subscribe before reading the backlog so nothing falls between.
	live := make(chan activity.Event, 256)
	overflow := make(chan struct{})
	var overflowOnce sync.Once
	if follow {
		cancel := s.activity.Subscribe(func(e activity.Event) {
			if !f.Match(e) {
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
	backlog, _ := s.activity.Query(f)
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/x-ndjson")
	}
	var last uint64
	write := func(e activity.Event) error {
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
	done := s.openStream()
	defer s.closeStream(done)
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

func (s *Server) downloadLogs(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="activity.log"`)
	files := s.activity.Files()
	if len(files) == 0 {
		// No data directory: the ring is all there is.
		evs, _ := s.activity.Query(activity.Filter{Limit: 1 << 30})
		for i := len(evs) - 1; i >= 0; i-- {
			b, _ := json.Marshal(evs[i])
			_, _ = w.Write(append(b, '\n'))
		}
		return
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		_, err = io.Copy(w, f)
		_ = f.Close()
		if err != nil {
			return
		}
	}
}

func (s *Server) openStream() chan struct{} {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if s.streams == nil {
		s.streams = map[chan struct{}]struct{}{}
	}
	ch := make(chan struct{})
	s.streams[ch] = struct{}{}
	return ch
}

func (s *Server) closeStream(ch chan struct{}) {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	if _, ok := s.streams[ch]; ok {
		delete(s.streams, ch)
		close(ch)
	}
}

// closeStreams ends every follow stream (shutdown: http.Server.Shutdown
// would otherwise wait for them).
func (s *Server) closeStreams() {
	s.streamMu.Lock()
	defer s.streamMu.Unlock()
	for ch := range s.streams {
		close(ch)
		delete(s.streams, ch)
	}
}
