package livelink

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/saint-os/saint/persist"
)

// SendersFile is the allow-list's file name in the server's data
// directory.
const SendersFile = "livelink_senders.json"

// Bounds on what the receiver remembers about senders it refuses, so that
// a flood of spoofed addresses costs a fixed amount of memory.
const (
	MaxUnknownSenders = 64
	maxSenderSubjects = 16
)

// AllowedSender is one entry of the allow-list.
type AllowedSender struct {
	Address string `json:"address"`
	// Subjects are the subject names the sender had used when it was
	// allowed, to recognise it by later.
	Subjects []string `json:"subjects,omitempty"`
}

// UnknownSender is a sender whose frames were dropped.
type UnknownSender struct {
	Address   string    `json:"address"`
	Subjects  []string  `json:"subjects"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Packets   uint64    `json:"packets"`
}

// SenderList is livelink list_senders' answer.
type SenderList struct {
	Allowed []AllowedSender `json:"allowed"`
	Unknown []UnknownSender `json:"unknown"`
	// Dropped counts every frame refused because of its sender.
	Dropped uint64 `json:"dropped"`
	// LoopbackAllowed is set when senders on this machine are admitted
	// without being listed (a server without authentication).
	LoopbackAllowed bool `json:"loopback_allowed"`
}

// Senders is the LiveLink allow-list: frames are taken only from the
// addresses on it (and from loopback when AllowLoopback was given). It
// remembers the senders it refused. Its methods are safe from any
// goroutine; Allow and Revoke write the list to its file.
type Senders struct {
	path     string
	loopback bool

	saveMu sync.Mutex // serialises Allow and Revoke with their writes
	mu     sync.Mutex
	// allowed maps a canonical address to its entry.
	allowed map[string]AllowedSender
	unknown map[string]*UnknownSender
	dropped uint64
}

// NewSenders returns an empty allow-list kept in path ("" keeps it in
// memory only). allowLoopback admits senders on this machine.
func NewSenders(path string, allowLoopback bool) *Senders {
	return &Senders{path: path, loopback: allowLoopback,
		allowed: map[string]AllowedSender{}, unknown: map[string]*UnknownSender{}}
}

// Load reads the allow-list from its file; a missing file is an empty
// list. A file that does not decode leaves the list empty (nothing is
// admitted) and returns the error.
func (s *Senders) Load() error {
	if s.path == "" {
		return nil
	}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("livelink: reading the allow-list: %w", err)
	}
	var f struct {
		Allowed []AllowedSender `json:"allowed"`
	}
	// Empty and null are damage too: the list is written {"allowed": []}.
	if err := persist.DecodeJSON(data, &f); err != nil {
		return fmt.Errorf("livelink: %s: %w", s.path, err)
	}
	allowed := map[string]AllowedSender{}
	for i, a := range f.Allowed {
		addr, err := ParseSenderAddress(a.Address)
		if err != nil {
			return fmt.Errorf("livelink: %s: allowed[%d].address: %w", s.path, i, err)
		}
		a.Address = addr
		allowed[addr] = a
	}
	s.mu.Lock()
	s.allowed = allowed
	s.mu.Unlock()
	return nil
}

// ParseSenderAddress checks an IP address and returns its canonical form
// (IPv4-mapped IPv6 addresses become IPv4).
func ParseSenderAddress(a string) (string, error) {
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return "", fmt.Errorf("want an IP address such as 192.168.4.20, got %q", a)
	}
	return ip.Unmap().String(), nil
}

// Allowed reports whether frames from address ip are taken.
func (s *Senders) Allowed(ip string) bool {
	if s.loopback {
		if a, err := netip.ParseAddr(ip); err == nil && a.IsLoopback() {
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.allowed[ip]
	return ok
}

// Admit reports whether a frame of subject from ip is taken; a refused
// one is counted and its sender remembered, at time now.
func (s *Senders) Admit(ip, subject string, now time.Time) bool {
	if s.Allowed(ip) {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped++
	u := s.unknown[ip]
	if u == nil {
		if len(s.unknown) >= MaxUnknownSenders {
			s.forgetOldest()
		}
		u = &UnknownSender{Address: ip, FirstSeen: now}
		s.unknown[ip] = u
	}
	u.LastSeen = now
	u.Packets++
	if subject != "" && !slices.Contains(u.Subjects, subject) && len(u.Subjects) < maxSenderSubjects {
		u.Subjects = append(u.Subjects, subject)
	}
	return false
}

// forgetOldest drops the unknown sender heard from longest ago (s.mu).
func (s *Senders) forgetOldest() {
	var oldest *UnknownSender
	for _, u := range s.unknown {
		if oldest == nil || u.LastSeen.Before(oldest.LastSeen) {
			oldest = u
		}
	}
	if oldest != nil {
		delete(s.unknown, oldest.Address)
	}
}

// List returns the allow-list and the refused senders, each sorted by
// address.
func (s *Senders) List() SenderList {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := SenderList{Allowed: []AllowedSender{}, Unknown: []UnknownSender{}, Dropped: s.dropped, LoopbackAllowed: s.loopback}
	for _, a := range s.allowed {
		a.Subjects = slices.Clone(a.Subjects)
		l.Allowed = append(l.Allowed, a)
	}
	for _, u := range s.unknown {
		c := *u
		c.Subjects = slices.Clone(u.Subjects)
		l.Unknown = append(l.Unknown, c)
	}
	slices.SortFunc(l.Allowed, func(a, b AllowedSender) int { return compareAddr(a.Address, b.Address) })
	slices.SortFunc(l.Unknown, func(a, b UnknownSender) int { return compareAddr(a.Address, b.Address) })
	return l
}

func compareAddr(a, b string) int {
	pa, ea := netip.ParseAddr(a)
	pb, eb := netip.ParseAddr(b)
	if ea != nil || eb != nil {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	return pa.Compare(pb)
}

// Allow puts address on the allow-list and writes the list; the sender's
// frames are taken from the next one on. Allowing an address already on
// the list changes nothing.
func (s *Senders) Allow(address string) (AllowedSender, error) {
	addr, err := ParseSenderAddress(address)
	if err != nil {
		return AllowedSender{}, err
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if a, ok := s.allowed[addr]; ok {
		s.mu.Unlock()
		return a, nil
	}
	a := AllowedSender{Address: addr}
	if u := s.unknown[addr]; u != nil {
		a.Subjects = slices.Clone(u.Subjects)
	}
	next := maps.Clone(s.allowed)
	next[addr] = a
	s.mu.Unlock()
	if err := s.save(next); err != nil {
		return AllowedSender{}, err
	}
	s.mu.Lock()
	s.allowed = next
	delete(s.unknown, addr)
	s.mu.Unlock()
	return a, nil
}

// ErrNotAllowed is Revoke's error for an address not on the list.
var ErrNotAllowed = errors.New("not on the allow-list")

// Revoke takes address off the allow-list and writes the list; its
// frames are dropped from the next one on.
func (s *Senders) Revoke(address string) error {
	addr, err := ParseSenderAddress(address)
	if err != nil {
		return err
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if _, ok := s.allowed[addr]; !ok {
		s.mu.Unlock()
		return fmt.Errorf("%s is %w", addr, ErrNotAllowed)
	}
	next := maps.Clone(s.allowed)
	delete(next, addr)
	s.mu.Unlock()
	if err := s.save(next); err != nil {
		return err
	}
	s.mu.Lock()
	s.allowed = next
	s.mu.Unlock()
	return nil
}

// save writes allowed to the file (saveMu held).
func (s *Senders) save(allowed map[string]AllowedSender) error {
	if s.path == "" {
		return nil
	}
	f := struct {
		Allowed []AllowedSender `json:"allowed"`
	}{Allowed: []AllowedSender{}}
	for _, a := range allowed {
		f.Allowed = append(f.Allowed, a)
	}
	slices.SortFunc(f.Allowed, func(a, b AllowedSender) int { return compareAddr(a.Address, b.Address) })
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("livelink: saving the allow-list: %w", err)
	}
	if err := persist.WriteFile(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("livelink: saving the allow-list: %w", err)
	}
	return nil
}
