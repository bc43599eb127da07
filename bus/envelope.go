package bus

import (
	"encoding/json"
	"fmt"
)

// The reply envelope is what a service sends back on the wire:
//
//	{"result": <response>}   on success
//	{"error": "<message>"}   when the handler failed
//
// It is what lets a handler's error reach the caller as a *RemoteError
// rather than as a response body the caller would have to inspect, and it
// keeps a null response distinct from a failure.
type replyEnvelope struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *string         `json:"error,omitempty"`
}

// encodeReply builds the envelope for resp or, if herr is not nil, for the
// error alone.
func encodeReply(resp any, herr error) ([]byte, error) {
	if herr != nil {
		msg := herr.Error()
		return json.Marshal(replyEnvelope{Error: &msg})
	}
	result, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	// Splice rather than marshal the envelope, which would validate and
	// copy the already-encoded response a second time.
	b := make([]byte, 0, len(`{"result":}`)+len(result))
	b = append(b, `{"result":`...)
	b = append(b, result...)
	return append(b, '}'), nil
}

// decodeReply unwraps an envelope into the response message, or into the
// handler's error as a *RemoteError.
func decodeReply(service string, data []byte) (Msg, error) {
	var env replyEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return Msg{}, fmt.Errorf("bus: malformed reply from %s: %w", service, err)
	}
	if env.Error != nil {
		return Msg{}, &RemoteError{Service: service, Message: *env.Error}
	}
	if env.Result == nil {
		env.Result = json.RawMessage("null")
	}
	return Msg{Topic: service, Data: env.Result}, nil
}
