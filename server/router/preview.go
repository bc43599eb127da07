package router

import (
	"github.com/saint-os/saint/server/router/target"
	"sort"
	"time"
)

// Preview is the live preview of one route for the Routes page: the
// latest value of each mapping's input and what the mapping makes of it,
// and what the route's target is being sent.
type Preview struct {
	RouteID string `json:"route_id"`
	Source  string `json:"source"`
	Subject string `json:"subject,omitempty"`
	Target  string `json:"target"`
	// HasInput is false when the source has sent nothing yet; InputAgeMS
	// is how old its latest input is.
	HasInput   bool    `json:"has_input"`
	InputAgeMS float64 `json:"input_age_ms"`
	// Active is true while the route's input is fresh (within
	// source_timeout_ms) and the route is enabled.
	Active   bool             `json:"active"`
	Mappings []PreviewMapping `json:"mappings"`
	// Values is the route's output: per property, the sum of its mappings
	// (for a passthrough route, the values of its latest commands, as
	// "target.property" when its target is "*").
	Values map[string]float64 `json:"values"`
	// Output is what the target was last sent, and Driving the routes
	// driving it now, highest priority first.
	Output  map[string]float64 `json:"output"`
	Driving []string           `json:"driving"`
}

// PreviewMapping is one mapping's line: "Ch2 = 0.75 → linear = 0.75".
// Input and Output are null while the input has no such property. Unit is
// the output property's (Targets), and OutOfRange says Output is beyond
// the property's limits, which the target's role will not follow.
type PreviewMapping struct {
	From       string   `json:"from"`
	To         string   `json:"to"`
	Input      *float64 `json:"input"`
	Output     *float64 `json:"output"`
	Unit       string   `json:"unit,omitempty"`
	OutOfRange bool     `json:"out_of_range,omitempty"`
}

// Preview computes the live preview of rt, which may be a configured
// route or a draft that is not saved. Call it on the executor.
func (r *Router) Preview(rt Route) Preview {
	now := r.ex.Now()
	p := Preview{RouteID: rt.ID, Source: rt.Input.Source, Subject: rt.Input.Subject, Target: rt.Output.Target,
		Mappings: []PreviewMapping{}, Values: map[string]float64{}, Output: map[string]float64{}, Driving: []string{}}
	snap := r.latestInput(&rt)
	if snap != nil {
		p.HasInput = true
		p.InputAgeMS = float64(now.Sub(snap.at)) / float64(time.Millisecond)
		p.Active = rt.Enabled && r.fresh(snap.at, now)
	}
	if rt.Mapping.Passthrough {
		targets := []string{rt.Output.Target}
		if rt.Output.Target == target.Any {
			targets = r.names
		}
		for _, t := range targets {
			c := r.contrib[t][rt.ID]
			if c == nil || !r.fresh(c.at, now) {
				continue
			}
			for k, v := range c.values {
				if rt.Output.Target == target.Any {
					k = t + "." + k
				}
				p.Values[k] = v
			}
		}
		if at, ok := r.lastInput[rt.ID]; ok {
			p.HasInput = true
			p.InputAgeMS = float64(now.Sub(at)) / float64(time.Millisecond)
			p.Active = rt.Enabled && r.fresh(at, now)
		}
	} else {
		target := r.targets[rt.Output.Target]
		for i := range rt.Mapping.List {
			m := &rt.Mapping.List[i]
			pm := PreviewMapping{From: m.From, To: m.To}
			prop, known := Property{}, false
			if target != nil {
				prop, known = target.Property(m.To)
				pm.Unit = prop.Unit
			}
			if snap != nil {
				if v, ok := snap.values[m.From]; ok {
					out := m.Apply(v)
					pm.Input, pm.Output = &v, &out
					pm.OutOfRange = known && prop.Check(m.To, out) != nil
					p.Values[m.To] += out
				}
			}
			p.Mappings = append(p.Mappings, pm)
		}
	}
	if o := r.outputs[rt.Output.Target]; o != nil {
		for k, v := range o.last {
			p.Output[k] = v
		}
		if o.active {
			p.Driving = append(p.Driving, o.routeIDs...)
		}
	}
	return p
}

// latestInput finds the freshest input a route would take: of its source
// and subject, or of any subject when it names none.
func (r *Router) latestInput(rt *Route) *inputSnapshot {
	if s, ok := r.inputs[rt.Input.Source+"\x00"+rt.Input.Subject]; ok {
		return s
	}
	if rt.Input.Subject != "" {
		return nil
	}
	var cands []*inputSnapshot
	for _, s := range r.inputs {
		if s.source == rt.Input.Source {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	sort.Slice(cands, func(i, j int) bool {
		if !cands[i].at.Equal(cands[j].at) {
			return cands[i].at.After(cands[j].at)
		}
		return cands[i].subject < cands[j].subject
	})
	return cands[0]
}
