// Package heartbeat is the server's heartbeat on the bus: a
// msg.ServerHeartbeat on msg.TopicServerHeartbeat every
// msg.HeartbeatInterval while the server runs. Motor nodes stop their
// actuators when it falls silent for their link_timeout_ms (see
// rolekit.Link), so a server killed, a broken bus or a node cut off from
// the network stops the robot within that time.
package heartbeat
