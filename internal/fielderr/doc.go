// Package fielderr is the project's one error for a wrong field of
// something given — a configuration file, a request's parameters, a
// settings document, a packet, a ROS 2 sample: the field's path and what
// was expected of it, and the cause when there is one. It is to field
// checks what os.PathError is to file operations: packages with more to
// say (a configuration's file and line, a sample's message type) wrap it,
// and whoever reports an error finds the field with errors.As, whatever
// wraps it. The WebSocket gateway reports an *Error's field as an
// invalid_param response's "field".
package fielderr
