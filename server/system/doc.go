// Package system is the server's "system" target of the WebSocket API:
// the system status (the dashboard's server, nodes and inputs boxes,
// also served on the bus as msg.ServiceSystemStatus and pushed on the
// "system" topic once a second), shutdown and reboot of the server's
// machine through a Power hook, and reboot of one node through its update
// service. The machine's health is sampled on the executor every two
// seconds, so a status never touches /proc.
package system
