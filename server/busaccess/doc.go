// Package busaccess is who may use the robot's NATS bus, and for what.
//
// saint-server's embedded broker authenticates every client with a NATS
// nkey: the client signs the nonce the server sends at each connection,
// and the Authority checks that signature (nats-server's
// CustomClientAuthentication) before giving the connection its
// permissions:
//
//   - The server itself, the ROS 2 bridge and tools connect with keys the
//     Authority makes at its first start (server.nk, ros2.nk, tools.nk in
//     its directory, 0600): every subject. The server serves its services
//     on a second connection with its key, named
//     natsbus.ServerServicesName, which may only receive service requests
//     and publish in inboxes ("_INBOX.>"): a request naming a command
//     topic as its reply subject cannot make the server publish there.
//   - A node connects with the key it made at its first boot, under the
//     connection name "saint-node <id>". Unadopted, it may publish only its
//     announcement (on its own subject, saint.nodes.<id>.announce), its
//     status and its log, call the firmware check and download and the role
//     validation, and serve its own node services (adopt, reset,
//     gpio_probe, update), answering in inboxes only: not with NATS's
//     response permission, which would let it publish once to the reply
//     subject of any message it receives, its own included. While its key has a connection open, no other
//     key may connect under its id, so an announcement on that subject
//     comes from that key. At most 256 unadopted ids are remembered; a new
//     one takes the place of the least recently seen id without a
//     connection, and one source address may have 16 connected.
//   - Adoption (Grant) binds the node's key to its id and grants its role's
//     subjects: publish under its topic prefix (never its own command
//     topics), raise alerts on its own saint.nodes.<id>.alert, fetch its
//     own role configuration, subscribe to its prefix, serve its role's
//     services; the console also reads the router's status, the nodes'
//     status and the roles' power topics, and nothing else outside its
//     prefix. Un-adoption
//     (Revoke) takes them away. Grants are kept in nodes.json, so a server
//     restart keeps adopted nodes working; a changed grant takes effect by
//     closing the node's connection, which reconnects at once under the
//     new permissions.
//
// Enrolment (Enrol, the WebSocket API's enrol_node, which flash_node.sh
// calls through saintctl nodes enrol) registers a node's key before its
// first boot, kept in enrolled.json: from then on the node id connects
// with that key only, and the key under that id only, so no device can
// hold an enrolled node's id, even while the node is away; the adopt list
// marks the node's key as enrolled. While any node is enrolled, a node
// connecting with a key that was not (a lab node trusting the first server
// it meets, or a stranger) is an activity-log warning, one per source
// address per minute; with Options.RequireEnrolment such a key is refused.
// A damaged enrolled.json stops the server from starting, as a damaged
// rejected.json does.
//
// A key the Authority does not know is refused, as is a node id whose
// adoption belongs to another key. Refusals are reported once per source
// address per minute with their count, and at most 20 lines a minute
// across all addresses with one summary for the rest (LogEventsTo,
// through internal/persource.Events); so are the warnings of nodes that
// were not enrolled.
package busaccess
