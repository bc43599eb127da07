// Package consolealerts relays the nodes' console alerts to the console.
//
// A node raises an alert (low battery, a drive fault, a clamped head
// command) on its own /saint/nodes/{id}/alert. On the authenticated bus
// only that node's key may publish there, and only the server may publish
// on /saint/console/alerts, which the console (and the ROS 2 bridge)
// reads. The relay takes the source from the topic, never from the
// message, so an alert at the console names the node that raised it and
// no node can post one as "server" or as another node. It also bounds
// what one node can put on the console's screen: an unknown level counts
// as a warning, a message is cut to MaxMessage bytes, and a node raises at
// most Burst alerts per Window, the rest dropped (with a warning in the
// server's log once per window).
package consolealerts
