package ws

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/saint-os/saint/internal/fielderr"
)

// Request is a client message. Type
// is "command" (with Target), "management", "router", "rc", "subscribe",
// "unsubscribe" or "auth".
type Request struct {
	ID       json.RawMessage `json:"id,omitempty"`
	Type     string          `json:"type"`
	Target   string          `json:"target,omitempty"`
	Action   string          `json:"action,omitempty"`
	Params   json.RawMessage `json:"params,omitempty"`
	Topics   []string        `json:"topics,omitempty"`
	RateHz   float64         `json:"rate_hz,omitempty"`
	Token    string          `json:"token,omitempty"`
	ClientID string          `json:"client_id,omitempty"`
}

// Response answers a Request; ID is the request's, echoed verbatim.
type Response struct {
	ID     json.RawMessage `json:"id"`
	Type   string          `json:"type"` // "response"
	Status string          `json:"status"`
	Data   any             `json:"data,omitempty"`
	// Error is set when Status is "error": Message says what is wrong and
	// Field names the parameter at fault, if one is.
	Error   *ErrorBody `json:"error,omitempty"`
	Message string     `json:"message,omitempty"`
}

// ErrorBody details a failed request.
type ErrorBody struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// RetryAfter is how many seconds to wait before trying again, for
	// an auth message from an address waiting after wrong tokens.
	RetryAfter int `json:"retry_after,omitempty"`
}

// State is a state update pushed to subscribers.
type State struct {
	Type      string  `json:"type"` // "state"
	Node      string  `json:"node"`
	Timestamp float64 `json:"timestamp"`
	Data      any     `json:"data"`
}

// Error codes.
const (
	CodeBadRequest   = "bad_request"
	CodeInvalidParam = "invalid_params"
	CodeUnknown      = "unknown_action"
	CodeFailed       = "failed"
	CodeUnauthorized = "unauthorized"
	CodeRateLimited  = "rate_limited"
)

// Error is a handler error with a code and the parameter at fault.
type Error struct {
	Code    string
	Field   string
	Message string
	// RetryAfter is in whole seconds (ErrorBody.RetryAfter).
	RetryAfter int
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// ParamError returns an invalid-parameter error naming field: a
// *fielderr.Error, as every package's field errors are, which the gateway
// answers with CodeInvalidParam and the field.
func ParamError(field, format string, args ...any) error { return fielderr.New(field, format, args...) }

// Handler runs a request. params is the raw "params" object (never nil:
// absent params arrive as {}). The returned value becomes "data".
type Handler func(ctx context.Context, c *Client, params json.RawMessage) (any, error)

// DecodeParams decodes params into v, rejecting unknown fields is not done
// (clients may send more than a command needs), but a field of the wrong
// type is reported by name.
func DecodeParams(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return ParamError(te.Field, "want %s, got %s", te.Type.String(), te.Value)
		}
		return &Error{Code: CodeBadRequest, Field: "params", Message: err.Error()}
	}
	return nil
}
