package server

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guard checks what every HTTP request to the web and WebSocket ports
// must pass before its handler runs:
//
//   - With authentication off (development, loopback only) the Host
//     header must name this machine's loopback (localhost, 127.0.0.1,
//     [::1]): a page on another site whose name was rebound to 127.0.0.1
//     (DNS rebinding) is refused with 421.
//   - A state-changing request (anything but GET, HEAD, OPTIONS) from a
//     browser — one with an Origin header, or Sec-Fetch-Site cross-site —
//     must come from the server's own origin or an allowed one, or it is
//     refused with 403 (cross-site request forgery). Programs send no
//     Origin and are not affected; the API token still applies.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authRequired() && !loopbackHost(r.Host) {
			http.Error(w, "Host "+r.Host+" is not this server: with authentication off only localhost and loopback addresses are served", http.StatusMisdirectedRequest)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if why := s.crossSite(r); why != "" {
				http.Error(w, why, http.StatusForbidden)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// crossSite says why r is a cross-site browser request, or "".
func (s *Server) crossSite(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			return "cross-site request refused"
		}
		return ""
	}
	u, err := url.Parse(origin)
	if err == nil && strings.EqualFold(u.Host, r.Host) {
		return ""
	}
	for _, a := range s.o.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return ""
		}
	}
	return "cross-origin request from " + origin + " refused (allow it with --allow-origin)"
}

// loopbackHost reports whether a Host header names the loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
