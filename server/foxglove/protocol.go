package foxglove

import (
	"encoding/binary"
	"encoding/json"
)

// Subprotocol is the WebSocket subprotocol this server speaks.
const Subprotocol = "foxglove.websocket.v1"

// Binary opcodes, server to client.
const (
	opMessageData         = 0x01
	opTime                = 0x02
	opServiceCallResponse = 0x03
)

// Binary opcodes, client to server.
const (
	opClientMessageData  = 0x01
	opServiceCallRequest = 0x02
)

// Status levels.
const (
	levelInfo    = 0
	levelWarning = 1
	levelError   = 2
)

type serverInfo struct {
	Op                 string            `json:"op"`
	Name               string            `json:"name"`
	Capabilities       []string          `json:"capabilities"`
	SupportedEncodings []string          `json:"supportedEncodings,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	SessionID          string            `json:"sessionId"`
}

type status struct {
	Op      string `json:"op"`
	Level   int    `json:"level"`
	Message string `json:"message"`
}

// Channel is an advertised server channel.
type Channel struct {
	ID             uint32 `json:"id"`
	Topic          string `json:"topic"`
	Encoding       string `json:"encoding"`
	SchemaName     string `json:"schemaName"`
	Schema         string `json:"schema"`
	SchemaEncoding string `json:"schemaEncoding,omitempty"`
}

type advertise struct {
	Op       string    `json:"op"`
	Channels []Channel `json:"channels"`
}

type service struct {
	ID             uint32 `json:"id"`
	Name           string `json:"name"`
	Type           string `json:"type"`
	RequestSchema  string `json:"requestSchema"`
	ResponseSchema string `json:"responseSchema"`
}

type advertiseServices struct {
	Op       string    `json:"op"`
	Services []service `json:"services"`
}

type serviceCallFailure struct {
	Op        string `json:"op"`
	ServiceID uint32 `json:"serviceId"`
	CallID    uint32 `json:"callId"`
	Message   string `json:"message"`
}

// clientOp is any JSON message a client sends; which fields matter
// depends on Op.
type clientOp struct {
	Op              string          `json:"op"`
	Subscriptions   json.RawMessage `json:"subscriptions"`
	SubscriptionIDs json.RawMessage `json:"subscriptionIds"`
	Channels        json.RawMessage `json:"channels"`
	ChannelIDs      json.RawMessage `json:"channelIds"`
}

type subscription struct {
	ID        *uint32 `json:"id"`
	ChannelID *uint32 `json:"channelId"`
}

type clientChannel struct {
	ID             *uint32 `json:"id"`
	Topic          string  `json:"topic"`
	Encoding       string  `json:"encoding"`
	SchemaName     string  `json:"schemaName"`
	Schema         string  `json:"schema"`
	SchemaEncoding string  `json:"schemaEncoding"`
	// refusal, when set, is why messages on this channel are refused:
	// its topic is not a command.
	refusal string
}

// messageData builds a Message Data frame.
func messageData(subID uint32, ns uint64, payload []byte) []byte {
	b := make([]byte, 1+4+8+len(payload))
	b[0] = opMessageData
	binary.LittleEndian.PutUint32(b[1:], subID)
	binary.LittleEndian.PutUint64(b[5:], ns)
	copy(b[13:], payload)
	return b
}

// timeFrame builds a Time frame.
func timeFrame(ns uint64) []byte {
	b := make([]byte, 9)
	b[0] = opTime
	binary.LittleEndian.PutUint64(b[1:], ns)
	return b
}

// serviceCallResponse builds a Service Call Response frame.
func serviceCallResponse(serviceID, callID uint32, encoding string, payload []byte) []byte {
	b := make([]byte, 1+4+4+4+len(encoding)+len(payload))
	b[0] = opServiceCallResponse
	binary.LittleEndian.PutUint32(b[1:], serviceID)
	binary.LittleEndian.PutUint32(b[5:], callID)
	binary.LittleEndian.PutUint32(b[9:], uint32(len(encoding)))
	n := 13 + copy(b[13:], encoding)
	copy(b[n:], payload)
	return b
}
