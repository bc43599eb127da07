package foxglove

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/server/ws"
)

// The parameters are named as ROS 2 names a node's parameters,
// "/<node>.<parameter>", the node being the part of the robot the setting
// belongs to: "/server" for the server's settings, "/router" for the
// router, an adopted node's role key ("/head", "/arms_left") for that
// node. The parameter is the setting's path in the WebSocket API's JSON,
// dotted: "/server.livelink.data_port", "/router.blending.mode",
// "/head.display_name", "/rc.failsafe.action".

// DefaultParams are the parameters offered over g's WebSocket API calls,
// for those calls g has: the server's settings (get_settings and
// set_settings), the adopted nodes' display names (list_adopted and
// set_node_name), the router's blending (get_blending and set_blending)
// and the RC receiver's (the rc commands). Each is read and set with those calls, so a set is
// checked, refused and stored exactly as the web UI's change is.
func DefaultParams(g *ws.Gateway) []ParamSource {
	var out []ParamSource
	if s := SettingsParams(g); s != nil {
		out = append(out, s)
	}
	if s := NodeParams(g); s != nil {
		out = append(out, s)
	}
	if s := BlendingParams(g); s != nil {
		out = append(out, s)
	}
	if s := RCParams(g); s != nil {
		out = append(out, s)
	}
	return out
}

// callParams offers the leaves of a JSON object that a gateway call
// answers as parameters "/<node>.<under>.<path>", and sets one by sending
// the call that changes the object a partial object with only that leaf
// (set_settings and set_blending merge what they are given).
type callParams struct {
	g *ws.Gateway
	// node and under make the names: "/server.livelink.data_port" has
	// node "server", no under and path "livelink.data_port".
	node, under string
	// get and set are the calls' type and action.
	get, set [2]string
	// object picks the object out of get's answer.
	object func(answer map[string]json.RawMessage) (map[string]json.RawMessage, error)
}

// SettingsParams offers the server's settings (the web UI's Settings
// page) as "/server.<section>.<field>": "/server.system.server_name",
// "/server.livelink.data_port", "/server.auth.required". Sections the
// settings show read-only (the RC receiver's, changed with the rc
// commands) are left out. Nil when g has no get_settings and
// set_settings.
func SettingsParams(g *ws.Gateway) ParamSource {
	if g.Lookup("management", "", "get_settings") == nil || g.Lookup("management", "", "set_settings") == nil {
		return nil
	}
	return &callParams{g: g, node: "server", get: [2]string{"management", "get_settings"}, set: [2]string{"management", "set_settings"},
		object: func(answer map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			var v struct {
				Settings map[string]json.RawMessage `json:"settings"`
				ReadOnly []string                   `json:"read_only"`
			}
			b, _ := json.Marshal(answer)
			if err := json.Unmarshal(b, &v); err != nil {
				return nil, fmt.Errorf("get_settings answered %s: %w", b, err)
			}
			for _, ro := range v.ReadOnly {
				delete(v.Settings, ro)
			}
			return v.Settings, nil
		}}
}

// BlendingParams offers the router's blending (the Routes page's
// blending settings) as "/router.blending.<field>": mode, blend_time_ms,
// source_timeout_ms. Nil when g has no get_blending and set_blending.
func BlendingParams(g *ws.Gateway) ParamSource {
	if g.Lookup("router", "", "get_blending") == nil || g.Lookup("router", "", "set_blending") == nil {
		return nil
	}
	return &callParams{g: g, node: "router", under: "blending", get: [2]string{"router", "get_blending"}, set: [2]string{"router", "set_blending"},
		object: func(answer map[string]json.RawMessage) (map[string]json.RawMessage, error) { return answer, nil }}
}

// call runs a gateway handler with params and returns its answer as
// JSON.
func call(ctx context.Context, g *ws.Gateway, typ, action string, params any) ([]byte, error) {
	h := g.Lookup(typ, "", action)
	if h == nil {
		return nil, fmt.Errorf("the server has no %s %s call", typ, action)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	res, err := h(ctx, nil, raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (p *callParams) prefix() string {
	if p.under == "" {
		return "/" + p.node + "."
	}
	return "/" + p.node + "." + p.under + "."
}

func (p *callParams) Params(ctx context.Context) (map[string]json.RawMessage, error) {
	b, err := call(ctx, p.g, p.get[0], p.get[1], struct{}{})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", p.get[0], p.get[1], err)
	}
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(b, &answer); err != nil {
		return nil, fmt.Errorf("%s %s answered %s, not an object", p.get[0], p.get[1], b)
	}
	obj, err := p.object(answer)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	flatten(p.prefix(), obj, out)
	return out, nil
}

// flatten adds the leaves of obj to out, named prefix + their dotted
// path; arrays are leaves.
func flatten(prefix string, obj map[string]json.RawMessage, out map[string]json.RawMessage) {
	for k, v := range obj {
		var inner map[string]json.RawMessage
		if t := bytes.TrimSpace(v); len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &inner) == nil {
			flatten(prefix+k+".", inner, out)
			continue
		}
		var c bytes.Buffer
		if json.Compact(&c, v) == nil {
			out[prefix+k] = c.Bytes()
		}
	}
}

func (p *callParams) SetParam(ctx context.Context, name string, value json.RawMessage) error {
	path, ok := strings.CutPrefix(name, p.prefix())
	if !ok || path == "" {
		return fmt.Errorf("not a parameter of %s", p.prefix())
	}
	// {"livelink": {"data_port": value}}: the setting alone, merged by
	// the call onto the others.
	patch := value
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		b, err := json.Marshal(map[string]json.RawMessage{parts[i]: patch})
		if err != nil {
			return err
		}
		patch = b
	}
	_, err := call(ctx, p.g, p.set[0], p.set[1], patch)
	return paramError(err, path)
}

// paramError words a call's error for the parameter at path (the
// parameter's path in the call's params): the call names the field at
// fault, which is the parameter itself, so only what is wrong is kept; a
// fault elsewhere keeps the field's name.
func paramError(err error, path string) error {
	if err == nil {
		return nil
	}
	field := ""
	var we *ws.Error
	var fe *fielderr.Error
	switch {
	case errors.As(err, &we):
		field = we.Field
	case errors.As(err, &fe):
		field = fe.Field
	}
	text := errorText(err)
	if field != "" && field == path {
		return errors.New(strings.TrimPrefix(text, field+": "))
	}
	return errors.New(text)
}

// nodeParams offers each adopted node's display name (the Nodes page's
// name) as "/<role key>.display_name", set with set_node_name. When more
// than one node holds a role key, each is "/<role key>/<node id>.display_name".
type nodeParams struct{ g *ws.Gateway }

// NodeParams offers the adopted nodes' display names. Nil when g has no
// list_adopted and set_node_name.
func NodeParams(g *ws.Gateway) ParamSource {
	if g.Lookup("management", "", "list_adopted") == nil || g.Lookup("management", "", "set_node_name") == nil {
		return nil
	}
	return &nodeParams{g: g}
}

type adoptedNode struct {
	NodeID      string `json:"node_id"`
	Role        string `json:"role"`
	Instance    string `json:"instance"`
	DisplayName string `json:"display_name"`
}

// nodes lists the adopted nodes by parameter name.
func (p *nodeParams) nodes(ctx context.Context) (map[string]adoptedNode, error) {
	b, err := call(ctx, p.g, "management", "list_adopted", struct{}{})
	if err != nil {
		return nil, fmt.Errorf("management list_adopted: %w", err)
	}
	var list struct {
		Nodes []adoptedNode `json:"nodes"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("management list_adopted answered %s: %w", b, err)
	}
	holders := map[string]int{}
	for _, n := range list.Nodes {
		holders[msg.RoleKey(n.Role, n.Instance)]++
	}
	sort.Slice(list.Nodes, func(i, j int) bool { return list.Nodes[i].NodeID < list.Nodes[j].NodeID })
	out := map[string]adoptedNode{}
	for _, n := range list.Nodes {
		key := msg.RoleKey(n.Role, n.Instance)
		if holders[key] > 1 {
			key += "/" + n.NodeID
		}
		out["/"+key+".display_name"] = n
	}
	return out, nil
}

func (p *nodeParams) Params(ctx context.Context) (map[string]json.RawMessage, error) {
	nodes, err := p.nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(nodes))
	for name, n := range nodes {
		out[name], _ = json.Marshal(n.DisplayName)
	}
	return out, nil
}

func (p *nodeParams) SetParam(ctx context.Context, name string, value json.RawMessage) error {
	nodes, err := p.nodes(ctx)
	if err != nil {
		return err
	}
	n, ok := nodes[name]
	if !ok {
		return fmt.Errorf("no adopted node has this parameter (any more)")
	}
	id, _ := json.Marshal(n.NodeID)
	_, err = call(ctx, p.g, "management", "set_node_name", map[string]json.RawMessage{"node_id": id, "display_name": value})
	return paramError(err, "display_name")
}

// rcParams offers the RC receiver's settings that the Inputs page
// changes with one rc command each: "/rc.enabled" (set_enabled),
// "/rc.protocol" (set_protocol), "/rc.failsafe.action" and
// "/rc.failsafe.timeout_ms" (set_failsafe). They are read from the
// settings' read-only "rc" section, the receiver's configuration.
type rcParams struct{ g *ws.Gateway }

// RCParams offers the RC receiver's settings. Nil when g lacks
// get_settings or one of the rc commands.
func RCParams(g *ws.Gateway) ParamSource {
	if g.Lookup("management", "", "get_settings") == nil {
		return nil
	}
	for _, a := range []string{"set_enabled", "set_protocol", "set_failsafe"} {
		if g.Lookup("rc", "", a) == nil {
			return nil
		}
	}
	return &rcParams{g: g}
}

type rcConfig struct {
	Enabled  *bool  `json:"enabled"`
	Protocol string `json:"protocol"`
	Failsafe struct {
		Action    string `json:"action"`
		TimeoutMs *int   `json:"timeout_ms"`
	} `json:"failsafe"`
}

// config reads the receiver's configuration from get_settings; nil when
// the settings have no "rc" section.
func (p *rcParams) config(ctx context.Context) (*rcConfig, error) {
	b, err := call(ctx, p.g, "management", "get_settings", struct{}{})
	if err != nil {
		return nil, fmt.Errorf("management get_settings: %w", err)
	}
	var v struct {
		Settings struct {
			RC *rcConfig `json:"rc"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("management get_settings answered %s: %w", b, err)
	}
	return v.Settings.RC, nil
}

func (p *rcParams) Params(ctx context.Context) (map[string]json.RawMessage, error) {
	c, err := p.config(ctx)
	if err != nil || c == nil || c.Enabled == nil || c.Failsafe.TimeoutMs == nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	out["/rc.enabled"], _ = json.Marshal(*c.Enabled)
	out["/rc.protocol"], _ = json.Marshal(c.Protocol)
	out["/rc.failsafe.action"], _ = json.Marshal(c.Failsafe.Action)
	out["/rc.failsafe.timeout_ms"], _ = json.Marshal(*c.Failsafe.TimeoutMs)
	return out, nil
}

func (p *rcParams) SetParam(ctx context.Context, name string, value json.RawMessage) error {
	var action, field string
	params := map[string]json.RawMessage{}
	switch name {
	case "/rc.enabled":
		action, field = "set_enabled", "enabled"
	case "/rc.protocol":
		action, field = "set_protocol", "protocol"
	case "/rc.failsafe.action":
		action, field = "set_failsafe", "action"
	case "/rc.failsafe.timeout_ms":
		// set_failsafe takes the action with the timeout: the current one.
		c, err := p.config(ctx)
		if err != nil {
			return err
		}
		if c == nil {
			return fmt.Errorf("the settings have no RC receiver")
		}
		params["action"], _ = json.Marshal(c.Failsafe.Action)
		action, field = "set_failsafe", "timeout_ms"
	default:
		return fmt.Errorf("not a parameter of /rc")
	}
	params[field] = value
	_, err := call(ctx, p.g, "rc", action, params)
	return paramError(err, field)
}
