// Package node is the generic node: the one program every board of the
// robot runs, whatever role it is later given. A Node announces itself to
// the server until it is adopted, then downloads its role configuration,
// checks the board has every peripheral the role needs and runs the role
// (package roles) on its executor, publishing its status once a second.
//
// Its life is a small state machine (Next is the transition table): BOOT
// checks for firmware with the server and installs an offered image
// (UPDATING; an image whose sha256 does not match is refused and the node
// runs on; so is a signed image older than the newest this node has run or
// installed, its anti-rollback floor, unless the offer carries the release
// key's downgrade permission for that version); a stored role is validated with the server and started
// (ACTIVE); without one the node is UNADOPTED and announces itself twice
// a second on its own /saint/nodes/{id}/announce (which the server relays
// on /saint/nodes/unadopted); the server's adopt call takes it through
// ADOPTING to ACTIVE.
// A reset (the bus service, the reset button held five seconds, or a
// factory reset) clears the role and boots again.
//
// Everything the node must not lose lives in its state directory (Store):
// role.yaml and role_config.yaml, written with write, fsync and rename
// (package persist) and in that order, so a node killed at any moment
// comes back either unadopted or active in its role; the installed and
// previous firmware images; a download in progress, which resumes where it
// stopped; and the running role's own state (rolekit.Env.State: a
// calibration, one file per name under role_state/, written the same way). The node takes its time from its executor's clock and
// its hardware from a board.Board, so the same node runs on a Raspberry
// Pi and in the simulator. docs/architecture.md draws the lifecycle.
package node
