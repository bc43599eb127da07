package motors

import (
	"fmt"
	"sort"
)

// outputGroup is the motor group behind a router target, "" for none. An
// arm's joint and pose targets share its group: one of them drives the arm
// at a time.
func outputGroup(target string) string {
	switch target {
	case "head":
		return "head"
	case "arms.left", "arms.left.pose":
		return "arms_left"
	case "arms.right", "arms.right.pose":
		return "arms_right"
	}
	return ""
}

// Hold reserves the motor group behind a router output for the router
// (router.OutputSessions): while held, no client's request_control gets
// it; it is refused while a client's session holds it, or during an
// emergency stop. A reservation takes no node session: the router drives
// the role through its own commands (HeadCommand, ArmCommand), which the
// role accepts while no node session is active. Outputs without a motor
// group (tracks, balance), or whose group has not reported its motors,
// hold nothing.
func (m *Motors) Hold(target string) error {
	g := m.group(outputGroup(target))
	if g == nil || len(g.local) == 0 {
		return nil // no motors known there: nothing to hold
	}
	switch {
	case m.estop != "":
		return fmt.Errorf("the emergency stop (%s) is latched", m.estop)
	case g.session != nil && g.session.reservation == target:
		return nil
	case g.session != nil:
		return fmt.Errorf("motors of %s are held by client %q", g.Name, g.session.client)
	}
	uuid, err := newUUID(m.o.Rand)
	if err != nil {
		return err
	}
	s := &session{uuid: uuid, client: "router (" + target + ")", reservation: target, granted: true, groups: []*group{g}}
	for _, id := range g.local {
		s.motors = append(s.motors, g.global(id))
	}
	sort.Ints(s.motors)
	g.session = s
	m.sessions[uuid] = s
	m.changed(s, "active", "")
	return nil
}

// Release ends the router's reservation of an output's motor group.
func (m *Motors) Release(target string) {
	g := m.group(outputGroup(target))
	if g == nil || g.session == nil || g.session.reservation != target {
		return
	}
	s := g.session
	m.drop(s)
	m.changed(s, "released", "")
}

func (m *Motors) group(name string) *group {
	for _, g := range m.groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}
