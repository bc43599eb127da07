// Package rolekit is what every role module is built on: the Env a role
// starts with (with State, where the node keeps what the role must not
// lose — MemState is its in-memory fake), the Role interface, and Kit, the
// bookkeeping every role shares.
//
// Kit claims and opens the pins of the role's gpio_mapping (actuators at
// their safe value: servo PWM at neutral, motor PWM at zero, outputs low),
// subscribes to topics and serves services through the typed bus helpers
// (bus.SubscribeStrictJSON, bus.ServeJSON: a message that is not of the
// handler's type, such as a service's reply envelope on a command topic,
// is counted and logged, never half-handled or read as a zero command),
// runs timers on the executor, and
// on Stop undoes all of it in one place: timers stopped, subscriptions
// closed, the role's own clean-ups run newest first, pins released.
//
// Section decodes a typed part of the role configuration over its
// defaults with roleconfig's known-field checking, so that every role
// reports an unknown or mistyped field the same way: file, line, field.
package rolekit
