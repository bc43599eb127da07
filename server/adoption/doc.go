// Package adoption is the server's adoption manager. Unadopted nodes
// announce themselves with their GPIO status; the
// manager lists them, adopts one into a role by calling the node's
// /saint/node/{node_id}/adopt service, and keeps the adopted registry in
// adopted.json (atomic writes) so adoptions survive a server restart. A
// node that boots with a stored role validates it here, and receives a new
// configuration if the server's has changed.
package adoption
