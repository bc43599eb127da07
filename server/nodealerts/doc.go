// Package nodealerts brings the nodes' warnings and errors to the server:
// every msg.NodeLog a node publishes on /saint/node/{id}/log (what its
// role or the node itself logged at warning level or above, already
// rate-limited on the node) is recorded in the activity log with its
// level, source and node id, and kept as one of the node's active alerts
// until it has not been repeated for ActiveFor. The server rate-limits
// again before the activity log (the same alert of a node at most once per
// LogRepeat, the repeats counted), so a flapping alert cannot flood it
// even from a node that does not limit itself.
//
// The WebSocket API has "get_node_alerts" (management): every node's
// active alerts, or one node's with {"node_id": ID}. The dashboard shows
// them per node, a node's page lists them.
package nodealerts
