// Package roleconfig reads role configurations: the YAML files the server
// keeps under configs/ (head.yaml, arms_left.yaml ...) and sends to a node
// when it is adopted, listed with their checksums in the firmware
// manifest. It is the schema shared by the server (which validates and
// publishes the files), the node (which stores and starts them) and the
// roles (which decode their own parameters with Decode). A configuration
// names the GPIO functions the role claims, the peripherals it requires
// (adoption fails on a board without them), limits, and role-specific
// parameters.
package roleconfig
