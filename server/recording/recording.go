package recording

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/ws"
)

// Deps is what the recording service needs of the server.
type Deps struct {
	Bus  bus.Bus
	Exec *executor.Executor
	// Dir is where recordings are written (required).
	Dir string
	// Writer configures the files (encodings, chunking).
	Writer record.WriterOptions
	Log    *slog.Logger
}

// Service runs at most one recording at a time.
type Service struct {
	d Deps

	mu   sync.Mutex
	rec  *record.Recorder
	last record.Status
}

// New returns a service that records into d.Dir.
func New(d Deps) (*Service, error) {
	if d.Bus == nil || d.Exec == nil || d.Dir == "" {
		return nil, errors.New("recording: Deps.Bus, Exec and Dir are required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d}, nil
}

// Options configure the recording feature of a saint-server.
type Options struct {
	// Dir is where recordings are written (required).
	Dir string
	// Writer configures the files (encodings, chunking).
	Writer record.WriterOptions
	// Activity, if not nil, is published on TopicActivity while the
	// server runs, so recordings and Foxglove have the activity log.
	Activity *activity.Log
}

// Register adds the record_start, record_stop and record_status actions
// to the server's feature host, publishes the activity log on the bus, and
// stops a running recording (closing its file) when the server stops. The
// returned service lets the command that starts the server begin a
// recording at launch (saint-server --record).
func Register(h *feature.Host, o Options) (*Service, error) {
	s, err := New(Deps{Bus: h.Bus, Exec: h.Exec, Dir: o.Dir, Writer: o.Writer, Log: h.Log})
	if err != nil {
		return nil, err
	}
	g := h.Gateway
	g.Handle("management", "record_start", s.handleStart)
	g.Handle("management", "record_stop", s.handleStop)
	g.Handle("management", "record_status", func(context.Context, *ws.Client, json.RawMessage) (any, error) {
		return s.Status(), nil
	})
	var cancel func()
	h.Add(feature.Funcs{
		OnStart: func() error {
			if o.Activity != nil {
				cancel = PublishActivity(o.Activity, h.Bus)
			}
			return nil
		},
		OnStop: func() {
			if cancel != nil {
				cancel()
			}
			if _, err := s.Stop(); err != nil {
				h.Log.Error("recording", "source", "record", "err", err)
			}
		},
	})
	return s, nil
}

// Limits are a recording's roll-over limits (zero: none).
type Limits struct {
	MaxBytes    int64
	MaxDuration time.Duration
}

// Start begins a recording; it is an error if one is running. It may be
// called from any goroutine but Exec's (it waits for Exec).
func (s *Service) Start(ctx context.Context, l Limits) (record.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		return s.rec.Status(), errors.New("a recording is already running; stop it first")
	}
	var rec *record.Recorder
	var err error
	if derr := s.d.Exec.Do(ctx, func() {
		rec, err = record.Start(record.Options{Bus: s.d.Bus, Exec: s.d.Exec, Dir: s.d.Dir,
			MaxBytes: l.MaxBytes, MaxDuration: l.MaxDuration, Writer: s.d.Writer, Log: s.d.Log})
	}); derr != nil {
		return record.Status{}, derr
	}
	if err != nil {
		return record.Status{}, err
	}
	s.rec = rec
	return rec.Status(), nil
}

// Stop ends the running recording, closing its file, and returns its
// final status; with none running it returns the last one's.
func (s *Service) Stop() (record.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return s.last, nil
	}
	err := s.rec.Stop()
	s.last = s.rec.Status()
	s.rec = nil
	return s.last, err
}

// Status is the running recording's status, or the last one's.
func (s *Service) Status() record.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		return s.rec.Status()
	}
	return s.last
}

type startParams struct {
	MaxBytes     *int64   `json:"max_bytes"`
	MaxDurationS *float64 `json:"max_duration_s"`
}

func (s *Service) handleStart(ctx context.Context, _ *ws.Client, params json.RawMessage) (any, error) {
	var p startParams
	if err := ws.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	var l Limits
	if p.MaxBytes != nil {
		if *p.MaxBytes < 0 {
			return nil, ws.ParamError("max_bytes", "want 0 (no limit) or more, got %d", *p.MaxBytes)
		}
		l.MaxBytes = *p.MaxBytes
	}
	if p.MaxDurationS != nil {
		if v := *p.MaxDurationS; v < 0 || math.IsNaN(v) || v > 1e7 {
			return nil, ws.ParamError("max_duration_s", "want 0 (no limit) to 1e7 seconds, got %g", v)
		}
		l.MaxDuration = time.Duration(*p.MaxDurationS * float64(time.Second))
	}
	st, err := s.Start(ctx, l)
	if err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "record_start: " + err.Error()}
	}
	return st, nil
}

func (s *Service) handleStop(context.Context, *ws.Client, json.RawMessage) (any, error) {
	st, err := s.Stop()
	if err != nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "record_stop: " + err.Error()}
	}
	return st, nil
}
