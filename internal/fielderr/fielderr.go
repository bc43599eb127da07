package fielderr

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a wrong field: Field is its dotted path ("routes[2].mapping[0].clamp",
// "rc.channels[2].min"; "" for the whole thing), Message says what was
// wrong and what was expected, Err is the cause when there is one.
type Error struct {
	Field   string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error for field with the message format makes of args.
func New(field, format string, args ...any) error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Join is the path of field inside prefix: "route" and "id" make
// "route.id", "routes" and "[2].id" make "routes[2].id"; either may be
// empty.
func Join(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}

// Prefix puts prefix in front of the field of the *Error in err's chain,
// for a check that ran on a part ("route") of what it reports on. An
// error without one is returned as it is.
func Prefix(prefix string, err error) error {
	var fe *Error
	if !errors.As(err, &fe) {
		return err
	}
	return &Error{Field: Join(prefix, fe.Field), Message: fe.Message, Err: fe.Err}
}
