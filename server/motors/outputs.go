package motors

import (
	"errors"
	"fmt"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/server/router"
	"github.com/saint-os/saint/server/router/target"
)

// RouterTimeout is the timeout of the router's sessions: the router sends
// every output it drives at its tick rate (50 Hz), each message keeps the
// session alive at the node.
const RouterTimeout = 500 // ms

// RouterRetry is how long a refused router session is not asked for
// again: the refusal is the answer meanwhile.
const RouterRetry = time.Second

// refusal is why a router session was refused, and when.
type refusal struct {
	why string
	at  time.Time
}

// Hold takes the motor group behind a router output for the router
// (router.OutputSessions) with a real session: a root session, client
// "router (<target>)", holding a node session at the group's middleware
// under which the role's own commands (the router's HeadCommand,
// ArmCommand, cmd_vel) drive the motors and keep it alive. While it is
// held, every other client's request_control is refused naming the
// router, at the root and at the node. Hold answers router.ErrHoldPending
// while the node is being asked, nil once held, and an error naming the
// holder when a client holds the group, or during an emergency stop. The
// router calls it at every tick it sends: a session that ended (the node
// timed it out, the e-stop) is taken again before the next message goes.
// Outputs without a motor group (the console), or whose group has not
// reported its motors, hold nothing.
func (m *Motors) Hold(output string) error {
	g := m.group(target.MotorGroup(output))
	if g == nil || len(g.local) == 0 {
		return nil // no motors known there: nothing to hold
	}
	switch s := g.session; {
	case m.estop != "":
		return fmt.Errorf("the emergency stop (%s) is latched", m.estop)
	case s != nil && s.router == output && s.granted:
		return nil
	case s != nil && s.router == output:
		return router.ErrHoldPending
	case s != nil:
		return fmt.Errorf("motors of %s are held by client %q", g.Name, s.client)
	}
	if r, ok := m.routerRefused[output]; ok {
		if m.h.Exec.Now().Sub(r.at) < RouterRetry {
			return errors.New(r.why)
		}
		delete(m.routerRefused, output)
	}
	uuid, err := newUUID(m.o.Rand)
	if err != nil {
		return err
	}
	client := "router (" + output + ")"
	// When the router lets go, joints finish their last command and hold
	// (KEEP_MODE), drives stop (DAMPING_MODE): what the roles did when a
	// route ended before sessions.
	behavior := msg.BehaviorKeep
	if g.Drives {
		behavior = msg.BehaviorDamping
	}
	s := &session{uuid: uuid, client: client, router: output, behavior: behavior, timeoutMS: RouterTimeout, mode: "ROLE", groups: []*group{g}}
	m.take(s, msg.RequestControlRequest{Client: client, TimeoutMS: RouterTimeout, Behavior: behavior, RoleCommands: true}, func(failure string) {
		if failure != "" {
			m.routerRefused[output] = refusal{why: failure, at: m.h.Exec.Now()}
		}
	})
	return router.ErrHoldPending
}

// Release ends the router's session of an output's motor group: the node
// applies its release behaviour (the head and the arms finish their last
// command and hold, the tracks and the base stop).
func (m *Motors) Release(output string) {
	g := m.group(target.MotorGroup(output))
	if g == nil || g.session == nil || g.session.router != output {
		return
	}
	s := g.session
	granted := s.granted
	m.drop(s)
	if granted {
		m.changed(s, "released", "")
	}
}

func (m *Motors) group(name string) *group {
	for _, g := range m.groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}
