// Package adoption is the server's adoption manager. Unadopted nodes
// announce themselves with their GPIO status, each on its own
// /saint/nodes/{node_id}/announce; the manager takes an announcement whose
// node_id is its topic's, relays it on /saint/nodes/unadopted, lists the
// nodes, adopts one into a role by calling the node's
// /saint/node/{node_id}/adopt service (with a robot type, only into the
// roles its robot configuration declares: Options.Roles, list_roles), and
// keeps the adopted registry in
// adopted.json (atomic writes) so adoptions survive a server restart. A
// node that boots with a stored role validates it here, and receives a new
// configuration if the server's has changed.
package adoption
