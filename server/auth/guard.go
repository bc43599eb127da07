package auth

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/saint-os/saint/internal/persource"
)

// GuardOptions configures a Guard. Zero values pick the defaults.
type GuardOptions struct {
	// Free is how many wrong tokens an address may send before it must
	// wait (default 5).
	Free int
	// FirstWait is the wait after the Free-th wrong token; each wrong
	// token after it doubles the wait, up to MaxWait (defaults 1 s and
	// 5 min).
	FirstWait, MaxWait time.Duration
	// Forget clears an address's count of wrong tokens after this long
	// without one (default 15 min).
	Forget time.Duration
	// MaxSources bounds the addresses tracked at once (default 4096);
	// when full, the one whose last wrong token is oldest is forgotten.
	MaxSources int
	// Log receives the failed logins and the refusals, each aggregated
	// per address per minute (nil: discarded).
	Log *slog.Logger
	// Now is the clock; nil means time.Now. The waits are promises to
	// clients in real seconds (Retry-After), so the server keeps the wall
	// clock here, not its executor's.
	Now func() time.Time
}

// eventsPerMinute bounds each kind of login event (failed, refused) per
// minute across all addresses; the rest of the minute's are summed in one
// line. A stranger with many addresses still adds at most 21 warnings of
// each kind a minute to the activity log.
const eventsPerMinute = 20

// Guard throttles API tokens per address: after Free wrong tokens an
// address must wait, the wait doubling with each further wrong one, and
// while it waits no token from it is looked at, the right one included.
// Every listener that takes the token (the HTTP API, the WebSocket API's
// bearer header and auth message, the Foxglove server) checks it through
// the same Guard, so waiting on one is waiting on all. It is safe for
// concurrent use.
type Guard struct {
	o GuardOptions

	mu    sync.Mutex
	addrs map[string]*strikes

	failures, refusals *persource.Events
}

// strikes are an address's wrong tokens.
type strikes struct {
	n     int       // wrong tokens since the count was last cleared
	last  time.Time // the last one
	until time.Time // no token is looked at before this
}

// NewGuard returns a guard with o's settings.
func NewGuard(o GuardOptions) *Guard {
	if o.Free <= 0 {
		o.Free = 5
	}
	if o.FirstWait <= 0 {
		o.FirstWait = time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 5 * time.Minute
	}
	if o.Forget <= 0 {
		o.Forget = 15 * time.Minute
	}
	if o.MaxSources <= 0 {
		o.MaxSources = 4096
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Guard{
		o: o, addrs: map[string]*strikes{},
		// One event per address per minute of each kind, so that a loop
		// of wrong tokens cannot push the real events out of the log.
		failures: persource.NewEvents(o.Log, slog.LevelWarn, time.Minute, o.MaxSources, eventsPerMinute, "failed logins", "source", "auth"),
		refusals: persource.NewEvents(o.Log, slog.LevelWarn, time.Minute, o.MaxSources, eventsPerMinute, "logins refused while backing off", "source", "auth"),
	}
}

// Verdict is the answer to a token presented from an address.
type Verdict struct {
	// OK: the token is the API token.
	OK bool
	// RetryAfter is set when the address is waiting after wrong tokens:
	// the token was not looked at, and may be sent again this much later.
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, as the
// Retry-After header gives it.
func (v Verdict) RetryAfterSeconds() int {
	return int((v.RetryAfter + time.Second - 1) / time.Second)
}

// Check answers token presented from addr through via ("http",
// "websocket", "foxglove"), valid saying whether a token is the API token.
// The token is looked at and its verdict counted in one step, under the
// guard's lock (valid is a constant-time comparison): tokens sent in
// parallel from one address are held to the same budget as tokens sent
// one after the other, not each looked at before any is counted.
func (g *Guard) Check(addr, via, token string, valid func(string) bool) Verdict {
	now := g.o.Now()
	g.mu.Lock()
	s := g.addrs[addr]
	if s != nil && now.Before(s.until) {
		wait, n := s.until.Sub(now), s.n
		g.mu.Unlock()
		v := Verdict{RetryAfter: wait}
		g.refusals.Record(addr, now, fmt.Sprintf("login from %s refused: %d wrong API tokens, waiting %d s", addr, n, v.RetryAfterSeconds()),
			"via", via, "retry_after_s", v.RetryAfterSeconds())
		return v
	}
	if valid(token) {
		delete(g.addrs, addr)
		g.mu.Unlock()
		return Verdict{OK: true}
	}
	if s == nil {
		if len(g.addrs) >= g.o.MaxSources {
			g.forgetOldest()
		}
		s = &strikes{}
		g.addrs[addr] = s
	}
	if now.Sub(s.last) > g.o.Forget {
		s.n = 0
	}
	s.n++
	s.last = now
	if over := s.n - g.o.Free; over >= 0 {
		wait := g.o.MaxWait
		if over < 30 && g.o.FirstWait<<over < g.o.MaxWait {
			wait = g.o.FirstWait << over
		}
		s.until = now.Add(wait)
	}
	g.mu.Unlock()
	g.failures.Record(addr, now, fmt.Sprintf("failed login from %s: wrong API token", addr), "via", via)
	return Verdict{}
}

func (g *Guard) forgetOldest() {
	var oldest string
	var at time.Time
	for a, s := range g.addrs {
		if oldest == "" || s.last.Before(at) {
			oldest, at = a, s.last
		}
	}
	delete(g.addrs, oldest)
}

// Refuse answers an HTTP request from an address that must wait: 429 Too
// Many Requests with Retry-After.
func Refuse(w http.ResponseWriter, v Verdict) {
	w.Header().Set("Retry-After", strconv.Itoa(v.RetryAfterSeconds()))
	http.Error(w, fmt.Sprintf("too many wrong API tokens from this address: retry in %d s", v.RetryAfterSeconds()), http.StatusTooManyRequests)
}
