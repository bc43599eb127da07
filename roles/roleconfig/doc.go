// Package roleconfig reads role configurations: the YAML files the server
// keeps under configs/ (head.yaml, arms_left.yaml ...) and sends to a node
// when it is adopted (spec: Firmware Update System, Role Configuration
// Format). A configuration names the GPIO functions the role claims, the
// peripherals it requires (adoption fails on a board without them), limits,
// and role-specific parameters.
package roleconfig
