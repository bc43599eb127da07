// Package target holds the facts of the router's output targets that
// more than the router needs: their names, the limits of what each takes,
// the motor group behind each and the WebSocket commands that drive it.
// The router builds its table (router.Targets: properties, messages,
// encoders) from them, the root motor middleware takes the group behind
// a target from Table, and the ROS 2 bridge checks the commands it turns
// into router inputs against the same limits and names, so a limit is
// written once.
//
// It imports nothing of the project: the bridge and any tool can use it
// without the router. Adding a target is one Spec here and its entry in
// router.Targets; see docs/architecture.md.
package target
