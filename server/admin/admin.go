package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/feature"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// Section is a read-only section of the settings: shown by get_settings
// under Name, changed only through its owner's commands.
type Section struct {
	Name string
	// View returns the section's current value.
	View func(ctx context.Context) (any, error)
	// ChangeWith says where the section is changed ("the rc commands"),
	// for the error a set_settings that tries gets.
	ChangeWith string
}

// Options are what the administration commands act on.
type Options struct {
	Settings *settings.Store
	// Tokens is the API token; nil when the server keeps none.
	Tokens *auth.Tokens
	// AuthRequired reports whether clients must authenticate now.
	AuthRequired func() bool
	Sections     []Section
}

type admin struct {
	h *feature.Host
	o Options
}

// Register installs the administration commands on h.
func Register(h *feature.Host, o Options) {
	a := &admin{h: h, o: o}
	g := h.Gateway
	g.Handle("management", "get_settings", a.getSettings)
	g.Handle("management", "set_settings", a.setSettings)
	g.Handle("management", "get_token", a.getToken)
	g.Handle("management", "regenerate_token", a.regenerateToken)
	g.Handle("management", "list_clients", a.listClients)
	// Told of each successful auth message.
	g.Handle("auth", "", func(_ context.Context, c *ws.Client, _ json.RawMessage) (any, error) {
		ci := c.Info()
		h.Log.Info("WebSocket client authenticated", "source", "websocket", "client", ci.ID, "client_id", ci.ClientID, "addr", ci.RemoteAddr)
		return nil, nil
	})
}

// view is get_settings' answer: the stored settings with the read-only
// sections beside them, which sections those are, and whether
// authentication is in force (NoAuth overrides the stored setting).
type view struct {
	Settings   map[string]json.RawMessage `json:"settings"`
	ReadOnly   []string                   `json:"read_only"`
	AuthActive bool                       `json:"auth_active"`
}

func (a *admin) view(ctx context.Context, st settings.Settings) (view, error) {
	v := view{Settings: map[string]json.RawMessage{}, ReadOnly: []string{}, AuthActive: a.o.AuthRequired()}
	b, err := json.Marshal(st)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v.Settings); err != nil {
		return v, err
	}
	for _, s := range a.o.Sections {
		sv, err := s.View(ctx)
		if err != nil {
			return v, fmt.Errorf("%s: %w", s.Name, err)
		}
		if v.Settings[s.Name], err = json.Marshal(sv); err != nil {
			return v, err
		}
		v.ReadOnly = append(v.ReadOnly, s.Name)
	}
	sort.Strings(v.ReadOnly)
	return v, nil
}

func (a *admin) getSettings(ctx context.Context, _ *ws.Client, _ json.RawMessage) (any, error) {
	return a.view(ctx, a.o.Settings.Get())
}

// setSettings merges params (a partial settings document) onto the
// settings. Turning authentication on closes every other session, which
// may have come in without a token.
func (a *admin) setSettings(ctx context.Context, c *ws.Client, raw json.RawMessage) (any, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) == nil {
		for _, s := range a.o.Sections {
			if _, ok := keys[s.Name]; ok {
				return nil, ws.ParamError(s.Name, "read-only in the settings; change it with %s", s.ChangeWith)
			}
		}
	}
	before := a.o.AuthRequired()
	next, err := a.o.Settings.Patch(raw)
	if err != nil {
		return nil, err
	}
	if a.o.AuthRequired() && !before {
		a.h.Gateway.CloseSessions(c, "authentication is now required")
		a.h.Log.Warn("authentication turned on; other sessions closed", "source", "auth")
	} else if !a.o.AuthRequired() && before {
		a.h.Log.Warn("authentication turned off", "source", "auth")
	}
	return a.view(ctx, next)
}

func (a *admin) getToken(context.Context, *ws.Client, json.RawMessage) (any, error) {
	if a.o.Tokens == nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "this server keeps no API token (no data directory)"}
	}
	return map[string]string{"token": a.o.Tokens.Token()}, nil
}

// regenerateToken replaces the API token. Every session, the requester's
// included once it has the answer, is closed: all must authenticate with
// the new token.
func (a *admin) regenerateToken(_ context.Context, c *ws.Client, _ json.RawMessage) (any, error) {
	if a.o.Tokens == nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "this server keeps no API token (no data directory)"}
	}
	tok, err := a.o.Tokens.Regenerate()
	if err != nil {
		return nil, err
	}
	a.h.Log.Warn("API token regenerated; all sessions closed", "source", "auth", "client", c.Info().ID)
	a.h.Gateway.CloseSessions(c, "API token regenerated")
	c.CloseAfterReply("API token regenerated")
	return map[string]string{"token": tok}, nil
}

func (a *admin) listClients(context.Context, *ws.Client, json.RawMessage) (any, error) {
	cs := a.h.Gateway.Clients()
	return map[string]any{"clients": cs, "count": len(cs)}, nil
}
