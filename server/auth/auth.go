package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/saint-os/saint/persist"
)

// FileName is the token file inside the data directory.
const FileName = "api_token"

// tokenBytes is the token's entropy: 256 bits, hex-encoded.
const tokenBytes = 32

// Tokens is the API token store. It is safe for concurrent use.
type Tokens struct {
	path string

	mu     sync.RWMutex
	digest [sha256.Size]byte
	token  string
}

// Open loads the token from dir, generating and storing a new one if there
// is none. The file is created 0600; a token file others can read is
// tightened to 0600.
func Open(dir string) (*Tokens, error) {
	if dir == "" {
		return nil, errors.New("auth: a data directory is required")
	}
	t := &Tokens{path: filepath.Join(dir, FileName)}
	data, err := os.ReadFile(t.path)
	switch {
	case err == nil:
		tok := strings.TrimSpace(string(data))
		if len(tok) < 16 {
			return nil, fmt.Errorf("auth: %s: token of %d characters; want at least 16 (delete the file to generate a new one)", t.path, len(tok))
		}
		if err := os.Chmod(t.path, 0o600); err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		t.set(tok)
		return t, nil
	case errors.Is(err, os.ErrNotExist):
		if _, err := t.Regenerate(); err != nil {
			return nil, err
		}
		return t, nil
	default:
		return nil, fmt.Errorf("auth: %w", err)
	}
}

// Path is where the token is stored.
func (t *Tokens) Path() string { return t.path }

// Token returns the current token.
func (t *Tokens) Token() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.token
}

func (t *Tokens) set(tok string) {
	t.mu.Lock()
	t.token = tok
	t.digest = sha256.Sum256([]byte(tok))
	t.mu.Unlock()
}

// Valid reports whether tok is the current token. Both sides are hashed
// first so the comparison takes the same time whatever tok's length.
func (t *Tokens) Valid(tok string) bool {
	if tok == "" {
		return false
	}
	d := sha256.Sum256([]byte(tok))
	t.mu.RLock()
	defer t.mu.RUnlock()
	return subtle.ConstantTimeCompare(d[:], t.digest[:]) == 1
}

// Regenerate replaces the token with a fresh random one, stores it and
// returns it. The old token stops working at once.
func (t *Tokens) Regenerate() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: generating a token: %w", err)
	}
	tok := hex.EncodeToString(b)
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	if err := persist.WriteFile(t.path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("auth: storing the token: %w", err)
	}
	t.set(tok)
	return tok, nil
}

// BearerToken returns the token of an "Authorization: Bearer TOKEN" header,
// or "" if r has none.
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) > len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
		return strings.TrimSpace(h[len(prefix):])
	}
	return ""
}

// Middleware lets a request through to next when required() is false or it
// carries a valid bearer token; otherwise it answers 401 with a
// WWW-Authenticate challenge. Tokens are checked through guard: from an
// address waiting after wrong tokens, a request with a token is answered
// 429 with Retry-After, whatever the token. A request with no token is
// not a guess and is not counted.
func (t *Tokens) Middleware(required func() bool, guard *Guard, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !required() {
			next.ServeHTTP(w, r)
			return
		}
		tok := BearerToken(r)
		if tok != "" {
			v := guard.Check(RemoteHost(r), "http", tok, t.Valid)
			if v.RetryAfter > 0 {
				Refuse(w, v)
				return
			}
			if v.OK {
				next.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="saint"`)
		http.Error(w, "unauthorized: send Authorization: Bearer <api token>", http.StatusUnauthorized)
	})
}

// RemoteHost is the address a request came from, without its port.
func RemoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// LoopbackOnly reports whether a listen address ("127.0.0.1:8000",
// "localhost:0", "[::1]:9090") binds loopback only: the one place a
// listener may serve without authentication.
func LoopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
