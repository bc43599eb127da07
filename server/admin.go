package server

import (
	"context"
	"encoding/json"

	"github.com/saint-os/saint/server/activity"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// registerAdmin registers the management commands the spec's Settings,
// Logs and Inputs pages need beyond node management: settings, the API
// token, the activity log and the list of WebSocket clients.
func (s *Server) registerAdmin() {
	g := s.gateway
	g.Handle("management", "get_activity_log", s.getActivityLog)
	g.Handle("management", "get_settings", s.getSettings)
	g.Handle("management", "set_settings", s.setSettings)
	g.Handle("management", "get_token", s.getToken)
	g.Handle("management", "regenerate_token", s.regenerateToken)
	g.Handle("management", "list_clients", s.listClients)
	// Told of each successful auth message.
	g.Handle("auth", "", func(_ context.Context, c *ws.Client, _ json.RawMessage) (any, error) {
		ci := c.Info()
		s.log.Info("WebSocket client authenticated", "source", "websocket", "client", ci.ID, "client_id", ci.ClientID, "addr", ci.RemoteAddr)
		return nil, nil
	})
}

// activityLogParams are get_activity_log's parameters (the spec's limit,
// offset, level, source; node, search and after_seq added for the Logs
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
func parseLogFilter(raw json.RawMessage) (activity.Filter, error) {
	var p activityLogParams
	if err := ws.DecodeParams(raw, &p); err != nil {
		return activity.Filter{}, err
	}
	f := activity.Filter{Limit: 100, Offset: p.Offset, Level: str(p.Level), Source: str(p.Source),
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
		if _, err := activity.ParseLevel(f.Level); err != nil {
			return f, ws.ParamError("level", "%v", err)
		}
	}
	return f, nil
}

func (s *Server) getActivityLog(_ context.Context, _ *ws.Client, raw json.RawMessage) (any, error) {
	f, err := parseLogFilter(raw)
	if err != nil {
		return nil, err
	}
	events, total := s.activity.Query(f)
	return map[string]any{"events": events, "total": total, "limit": f.Limit, "offset": f.Offset}, nil
}

// settingsView is get_settings' answer: the stored settings and whether
// authentication is in force (NoAuth overrides the stored setting).
type settingsView struct {
	Settings   settings.Settings `json:"settings"`
	AuthActive bool              `json:"auth_active"`
}

func (s *Server) getSettings(context.Context, *ws.Client, json.RawMessage) (any, error) {
	return settingsView{s.settings.Get(), s.authRequired()}, nil
}

// setSettings merges params (a partial settings document) onto the
// settings. Turning authentication on closes every other session, which
// may have come in without a token.
func (s *Server) setSettings(_ context.Context, c *ws.Client, raw json.RawMessage) (any, error) {
	before := s.authRequired()
	next, err := s.settings.Patch(raw)
	if err != nil {
		return nil, err
	}
	if s.authRequired() && !before {
		s.gateway.CloseSessions(c, "authentication is now required")
		s.log.Warn("authentication turned on; other sessions closed", "source", "auth")
	} else if !s.authRequired() && before {
		s.log.Warn("authentication turned off", "source", "auth")
	}
	return settingsView{next, s.authRequired()}, nil
}

func (s *Server) getToken(context.Context, *ws.Client, json.RawMessage) (any, error) {
	if s.tokens == nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "this server keeps no API token (no data directory)"}
	}
	return map[string]string{"token": s.tokens.Token()}, nil
}

// regenerateToken replaces the API token. Every session, the requester's
// included once it has the answer, is closed: all must authenticate with
// the new token.
func (s *Server) regenerateToken(_ context.Context, c *ws.Client, _ json.RawMessage) (any, error) {
	if s.tokens == nil {
		return nil, &ws.Error{Code: ws.CodeFailed, Message: "this server keeps no API token (no data directory)"}
	}
	tok, err := s.tokens.Regenerate()
	if err != nil {
		return nil, err
	}
	s.log.Warn("API token regenerated; all sessions closed", "source", "auth", "client", c.Info().ID)
	s.gateway.CloseSessions(c, "API token regenerated")
	c.CloseAfterReply("API token regenerated")
	return map[string]string{"token": tok}, nil
}

func (s *Server) listClients(context.Context, *ws.Client, json.RawMessage) (any, error) {
	cs := s.gateway.Clients()
	return map[string]any{"clients": cs, "count": len(cs)}, nil
}
