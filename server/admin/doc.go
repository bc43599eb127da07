// Package admin is the server's administration over the WebSocket API:
// the settings (get_settings, set_settings), the API token (get_token,
// regenerate_token), the connected clients (list_clients) and the record
// of each successful authentication.
//
// The settings page also shows sections that other features own, such as
// the RC receiver's configuration: Register takes them as Sections, which
// get_settings shows beside the stored settings and set_settings refuses
// to change, naming the commands that do.
package admin
