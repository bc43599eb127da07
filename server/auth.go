package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/saint-os/saint/server/auth"
	"github.com/saint-os/saint/server/settings"
	"github.com/saint-os/saint/server/ws"
)

// authRequired reports whether clients must present the API token.
func (s *Server) authRequired() bool {
	return !s.o.NoAuth && s.tokens != nil && s.settings.Get().Auth.Required
}

// authenticator adapts the server to ws.Authenticator.
type authenticator struct{ s *Server }

func (a authenticator) Required() bool { return a.s.authRequired() }
func (a authenticator) Valid(tok string) bool {
	return a.s.tokens != nil && a.s.tokens.Valid(tok)
}

// requireAuth guards an HTTP handler with the bearer token.
func (s *Server) requireAuth(h http.Handler) http.Handler {
	if s.tokens == nil {
		return h
	}
	return s.tokens.Middleware(s.authRequired, s.tokenGuard, h)
}

// publicAddrs lists the client-facing listen addresses that are not
// loopback-only. The internal firmware port is for nodes and serves
// nothing secret.
func (s *Server) publicAddrs() []string {
	var out []string
	for _, a := range []string{s.o.HTTPAddr, s.o.WSAddr, s.o.FoxgloveAddr} {
		if a != "" && !auth.LoopbackOnly(a) {
			out = append(out, a)
		}
	}
	return out
}

// checkSettings vetoes settings the server cannot honour.
func (s *Server) checkSettings(_, next settings.Settings) error {
	if !next.Auth.Required && !s.o.NoAuth {
		if pub := s.publicAddrs(); len(pub) > 0 {
			return &settings.FieldError{Field: "auth.required", Message: fmt.Sprintf(
				"cannot turn authentication off while the API listens beyond loopback (%s)", strings.Join(pub, ", "))}
		}
	}
	return nil
}

// Authenticator checks API tokens as the WebSocket API does, for other
// listeners that must sit behind the same token (the Foxglove server).
func (s *Server) Authenticator() ws.Authenticator { return authenticator{s} }
