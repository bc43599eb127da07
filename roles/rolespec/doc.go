// Package rolespec is the table of the roles a generic node can be adopted
// into: one RoleSpec per role, carrying its name, what may name its
// instances, its default display name, the topics others command it on,
// whether its node runs its loop in real time and what its motors are.
// Every list of roles in the tree is derived from Table: the role names
// (bus/msg), the roles a configuration may carry (roleconfig), adoption's
// checks and display names, the bus permissions (server/busaccess), the
// ROS 2 bridge's role topics, the motor groups' kinds, saint-node's
// real-time roles and the role configurations a scenario checks.
//
// The package imports nothing of the project, so every package can use
// it. The constructors of the roles stay an explicit map in roles.Builtin,
// whose keys a test holds equal to the table's names.
//
// Adding a role is one RoleSpec here, its package under roles/ with its
// entry in roles.Builtin, and its fixtures; see docs/architecture.md.
package rolespec
