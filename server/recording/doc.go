// Package recording lets WebSocket API clients start and stop a recording
// of every bus topic on a running server (package record writes the MCAP
// files):
//
//	{"type":"management","action":"record_start","params":{"max_bytes":100000000,"max_duration_s":600}}
//	{"type":"management","action":"record_stop"}
//	{"type":"management","action":"record_status"}
//
// Each answers with the recording's status (files, message counts, bytes).
// Files go into the directory the server was configured with; clients
// cannot choose paths on the robot. saintctl record start|stop|status
// uses these actions, and saint-server --record starts a recording at
// launch the same way. The server registers the feature (Register); a
// running recording is stopped, its file closed, when the server stops.
//
// The feature also puts the server's activity log on the bus
// (TopicActivity), so recordings and Foxglove have it.
package recording
