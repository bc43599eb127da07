package activity

import (
	"context"
	"errors"
	"log/slog"
	"strings"
)

// Handler returns a slog.Handler that records records at level or above in
// l. The "source" and "node" attributes fill the event's fields (a
// "component" attribute stands in for a missing source); the others go to
// Attrs. The record's own time is ignored in favour of the log's clock.
func (l *Log) Handler(level slog.Leveler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &handler{log: l, level: level}
}

type handler struct {
	log    *Log
	level  slog.Leveler
	attrs  []slog.Attr
	prefix string // group prefix for attributes added later
}

func (h *handler) Enabled(_ context.Context, lv slog.Level) bool { return lv >= h.level.Level() }

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	e := Event{Level: r.Level.String(), Message: r.Message}
	var component string
	var add func(prefix string, a slog.Attr)
	add = func(prefix string, a slog.Attr) {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			p := prefix
			if a.Key != "" {
				p += a.Key + "."
			}
			for _, g := range v.Group() {
				add(p, g)
			}
			return
		}
		key := prefix + a.Key
		switch key {
		case "source":
			e.Source = v.String()
			return
		case "node":
			e.Node = v.String()
			return
		case "component":
			component = v.String()
		}
		if e.Attrs == nil {
			e.Attrs = map[string]string{}
		}
		e.Attrs[key] = v.String()
	}
	for _, a := range h.attrs {
		add("", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(h.prefix, a)
		return true
	})
	if e.Source == "" {
		e.Source = component
	}
	h.log.Add(e)
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr{}, h.attrs...)
	for _, a := range as {
		if h.prefix != "" {
			a.Key = h.prefix + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

// Tee returns a handler that passes every record to each of hs (the
// console and the activity log).
func Tee(hs ...slog.Handler) slog.Handler { return tee(hs) }

type tee []slog.Handler

func (t tee) Enabled(ctx context.Context, lv slog.Level) bool {
	for _, h := range t {
		if h.Enabled(ctx, lv) {
			return true
		}
	}
	return false
}

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	var errs []string
	for _, h := range t {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if errs != nil {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (t tee) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (t tee) WithGroup(name string) slog.Handler {
	out := make(tee, len(t))
	for i, h := range t {
		out[i] = h.WithGroup(name)
	}
	return out
}
