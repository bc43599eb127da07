// Package broker is the NATS server saint-server embeds for its nodes
// (Start), and that tests run on 127.0.0.1. It is apart from natsbus, the
// client side, so that the node firmware links only the NATS client: the
// server is most of a megabyte of code and of package initialisation a node
// never uses.
//
// The broker has no authentication: it must listen only on the internal
// network (Options.Host), never where the WiFi clients are.
package broker
