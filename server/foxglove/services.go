package foxglove

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// serviceDef is a management call offered as a Foxglove service.
type serviceDef struct {
	service
	typ, action string
}

// serviceCalls are the WebSocket API calls offered as services: those
// whose handlers need no connection of their own (token and settings
// calls, shutdown and reboot are left to the WebSocket API).
var serviceCalls = [][2]string{
	{"management", "list_unadopted"}, {"management", "list_adopted"}, {"management", "get_gpio_status"},
	{"management", "adopt_node"}, {"management", "reset_node"}, {"management", "get_node_info"},
	{"management", "set_node_name"}, {"management", "firmware_status"}, {"management", "trigger_update"},
	{"management", "get_activity_log"},
	{"management", "record_start"}, {"management", "record_stop"}, {"management", "record_status"},
	{"router", "list_routes"}, {"router", "get_status"}, {"router", "set_route_enabled"},
	{"router", "list_presets"}, {"router", "load_preset"},
	{"rc", "get_status"},
}

// anyObjectSchema is the JSON Schema of a service's request and response:
// a JSON object (the call's params, its data). Foxglove parses both schemas
// of every service it is offered and fails on an empty one.
const anyObjectSchema = `{"type":"object","properties":{}}`

// serviceDefs lists the services the gateway has handlers for.
func (s *Server) serviceDefs() []serviceDef {
	g := s.o.Gateway
	if g == nil {
		return nil
	}
	var out []serviceDef
	for _, sc := range serviceCalls {
		if g.Lookup(sc[0], "", sc[1]) == nil {
			continue
		}
		name := "/saint/" + sc[0] + "/" + sc[1]
		out = append(out, serviceDef{service: service{ID: uint32(len(out) + 1), Name: name, Type: "saint." + sc[0] + "." + sc[1],
			RequestSchema: anyObjectSchema, ResponseSchema: anyObjectSchema},
			typ: sc[0], action: sc[1]})
	}
	return out
}

func (s *Server) advertiseServices() advertiseServices {
	m := advertiseServices{Op: "advertiseServices"}
	for _, d := range s.services {
		m.Services = append(m.Services, d.service)
	}
	return m
}

// callService runs a Service Call Request: the management call with the
// request's JSON as params; the answer is a Service Call Response with
// the call's JSON result, or a serviceCallFailure with the error.
func (c *client) callService(b []byte) {
	if len(b) < 13 {
		c.status(levelError, "service call request: %d bytes, want at least 13 (opcode, service id, call id, encoding length)", len(b))
		return
	}
	serviceID := binary.LittleEndian.Uint32(b[1:])
	callID := binary.LittleEndian.Uint32(b[5:])
	n := binary.LittleEndian.Uint32(b[9:])
	if uint64(n) > uint64(len(b)-13) {
		c.status(levelError, "service call request: encoding length %d runs past the end of the %d-byte message", n, len(b))
		return
	}
	encoding := string(b[13 : 13+n])
	payload := b[13+n:]
	fail := func(format string, args ...any) {
		c.sendJSON(serviceCallFailure{Op: "serviceCallFailure", ServiceID: serviceID, CallID: callID, Message: fmt.Sprintf(format, args...)})
	}
	if serviceID == 0 || int(serviceID) > len(c.s.services) {
		fail("unknown service id %d", serviceID)
		return
	}
	def := c.s.services[serviceID-1]
	if !c.authorized() {
		fail("%s: the API token changed: reconnect with the new token", def.Name)
		return
	}
	if encoding != "json" {
		fail("%s: encoding %q is not supported, use \"json\"", def.Name, encoding)
		return
	}
	params := json.RawMessage(payload)
	if len(payload) == 0 {
		params = json.RawMessage("{}")
	}
	if !json.Valid(params) {
		fail("%s: request is not JSON", def.Name)
		return
	}
	h := c.s.o.Gateway.Lookup(def.typ, "", def.action)
	ctx, cancel := context.WithTimeout(context.Background(), c.s.o.CallTimeout)
	defer cancel()
	res, err := c.run(ctx, h, params)
	if err != nil {
		fail("%s: %s", def.Name, errorText(err))
		return
	}
	out, err := json.Marshal(res)
	if err != nil {
		fail("%s: response not encodable: %v", def.Name, err)
		return
	}
	// A service response is a control message: never dropped.
	c.sendCtrl(frame{binary: true, b: serviceCallResponse(serviceID, callID, "json", out)})
}
