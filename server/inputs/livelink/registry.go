package livelink

import (
	"sort"
	"sync"
	"time"

	"github.com/saint-os/saint/bus/msg"
)

// Registry is the receiver's table of subjects: name, type, where the
// frames come from, their measured rate, property names and the latest
// frame. The receiver updates it on the executor; the router's WebSocket
// commands read it from handler goroutines, hence the lock.
type Registry struct {
	staleAfter  time.Duration
	forgetAfter time.Duration
	max         int
	aliases     map[string]string

	mu       sync.Mutex
	subjects map[string]*subjectEntry
	refused  uint64
}

// rateWindow is how many recent arrivals the frame rate is measured over.
const rateWindow = 32

type subjectEntry struct {
	info   msg.LiveLinkSubject
	last   msg.LiveLinkFrame
	lastAt time.Time
	stale  bool
	frames uint64
	// arrivals is a ring of the latest arrival times (executor clock).
	arrivals [rateWindow]time.Time
	next     int
}

// SubjectStatus is a subject as the registry sees it, with what
// msg.LiveLinkSubject does not carry.
type SubjectStatus struct {
	msg.LiveLinkSubject
	// Stale is set when no frame has arrived for the stale timeout.
	Stale bool `json:"stale"`
	// Frames counts the frames received.
	Frames uint64 `json:"frames"`
	// FrameNumber is the latest frame's number.
	FrameNumber uint64 `json:"frame_number"`
}

// NewRegistry returns an empty registry. A subject is stale after
// staleAfter without frames and forgotten after forgetAfter; at most max
// subjects are kept (frames of further subjects are refused).
func NewRegistry(staleAfter, forgetAfter time.Duration, max int) *Registry {
	return &Registry{staleAfter: staleAfter, forgetAfter: forgetAfter, max: max,
		aliases: arkitAliases(), subjects: map[string]*subjectEntry{}}
}

// SetStaleAfter changes the stale timeout.
func (r *Registry) SetStaleAfter(d time.Duration) {
	r.mu.Lock()
	r.staleAfter = d
	r.mu.Unlock()
}

// Observe records a frame from sourceIP arriving at now. It reports
// whether the subject is new or changed (type, source, properties, or back
// from stale) and whether the frame was taken: a new subject beyond the
// registry's size is refused.
func (r *Registry) Observe(f msg.LiveLinkFrame, sourceIP string, now time.Time) (changed, taken bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.subjects[f.SubjectName]
	if e == nil {
		if len(r.subjects) >= r.max {
			r.refused++
			return false, false
		}
		e = &subjectEntry{info: msg.LiveLinkSubject{SubjectName: f.SubjectName}}
		r.subjects[f.SubjectName] = e
		changed = true
	}
	props := canonicalProperties(f.PropertyNames, r.aliases)
	if e.info.SubjectType != f.SubjectType || e.info.SourceIP != sourceIP || e.stale || !equalStrings(e.info.Properties, props) {
		changed = true
	}
	e.info.SubjectType, e.info.SourceIP, e.info.Properties = f.SubjectType, sourceIP, props
	e.info.LastFrame = seconds(now)
	e.last, e.lastAt, e.stale = f, now, false
	e.frames++
	e.arrivals[e.next%rateWindow] = now
	e.next++
	e.info.FrameRate = e.rate()
	return changed, true
}

// rate is the mean rate over the recorded arrivals.
func (e *subjectEntry) rate() float64 {
	n := e.next
	if n > rateWindow {
		n = rateWindow
	}
	if n < 2 {
		return 0
	}
	newest := e.arrivals[(e.next-1)%rateWindow]
	oldest := e.arrivals[(e.next-n)%rateWindow]
	span := newest.Sub(oldest).Seconds()
	if span <= 0 {
		return 0
	}
	return float64(n-1) / span
}

// Sweep marks subjects without frames for the stale timeout as stale
// (their rate drops to 0) and forgets those silent for the forget timeout.
// It returns the subjects that changed, for publishing.
func (r *Registry) Sweep(now time.Time) []msg.LiveLinkSubject {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []msg.LiveLinkSubject
	if r.staleAfter <= 0 {
		return nil
	}
	for name, e := range r.subjects {
		silent := now.Sub(e.lastAt)
		switch {
		case silent > r.forgetAfter:
			delete(r.subjects, name)
		case silent > r.staleAfter && !e.stale:
			e.stale = true
			e.info.FrameRate = 0
			e.next = 0
			out = append(out, e.copyInfo())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SubjectName < out[j].SubjectName })
	return out
}

// Subjects lists the known subjects by name (router.SubjectRegistry).
func (r *Registry) Subjects() []msg.LiveLinkSubject {
	st := r.Status()
	out := make([]msg.LiveLinkSubject, len(st))
	for i := range st {
		out[i] = st[i].LiveLinkSubject
	}
	return out
}

// Subject returns one subject (router.SubjectRegistry).
func (r *Registry) Subject(name string) (msg.LiveLinkSubject, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.subjects[name]
	if e == nil {
		return msg.LiveLinkSubject{}, false
	}
	return e.copyInfo(), true
}

// Status lists the subjects by name with their staleness and counts.
func (r *Registry) Status() []SubjectStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]SubjectStatus, 0, len(r.subjects))
	for _, e := range r.subjects {
		out = append(out, SubjectStatus{LiveLinkSubject: e.copyInfo(), Stale: e.stale, Frames: e.frames, FrameNumber: e.last.FrameNumber})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SubjectName < out[j].SubjectName })
	return out
}

// LastFrame returns the subject's latest frame.
func (r *Registry) LastFrame(name string) (msg.LiveLinkFrame, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.subjects[name]
	if e == nil {
		return msg.LiveLinkFrame{}, false
	}
	f := e.last
	f.PropertyNames = append([]string(nil), f.PropertyNames...)
	f.PropertyValues = append([]float32(nil), f.PropertyValues...)
	return f, true
}

// active reports whether name is known and not stale.
func (r *Registry) active(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.subjects[name]
	return e != nil && !e.stale
}

// Refused counts frames of new subjects refused because the registry was
// full.
func (r *Registry) Refused() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

func (e *subjectEntry) copyInfo() msg.LiveLinkSubject {
	s := e.info
	s.Properties = append([]string{}, e.info.Properties...)
	return s
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
