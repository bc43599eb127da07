package sros2

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// MaxDomain is the highest domain id governance and permissions cover
// (from 0), so that one keystore serves any ROS_DOMAIN_ID: 230, the
// highest Cyclone DDS's access control accepts (ROS 2 allows up to 232,
// whose ports collide on Linux anyway).
const MaxDomain = 230

// Policy is what an enclave may do on the ROS 2 graph. Each list holds
// absolute ROS names or DDS Security patterns of them ("/saint/tracks/*":
// * matches any characters, / included); nil allows every name, an empty
// list none. The zero Policy allows everything, as sros2's default
// policy does.
type Policy struct {
	Publish   []string // topics the enclave may publish
	Subscribe []string // topics it may subscribe to
	Call      []string // services it may call (publish rq/…Request, subscribe rr/…Reply)
	Serve     []string // services it may answer (the reverse)
}

// Check checks every name of the policy.
func (p Policy) Check() error {
	for _, l := range []struct {
		what  string
		names []string
	}{{"publish", p.Publish}, {"subscribe", p.Subscribe}, {"call", p.Call}, {"serve", p.Serve}} {
		for _, n := range l.names {
			if !strings.HasPrefix(n, "/") || strings.ContainsAny(n, " \t<>&\"'") {
				return fmt.Errorf("sros2: %s %q: want an absolute ROS name or pattern such as /saint/tracks/cmd_vel or /saint/*", l.what, n)
			}
		}
	}
	return nil
}

// everything is whether the policy allows every name.
func (p Policy) everything() bool {
	return p.Publish == nil && p.Subscribe == nil && p.Call == nil && p.Serve == nil
}

// mangle turns ROS names (nil: all) into DDS topic names with prefix and
// suffix, as ROS 2's rmw implementations name topics.
func mangle(names []string, prefix, suffix string) []string {
	if names == nil {
		names = []string{"/*"}
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, prefix+n+suffix)
	}
	return out
}

// nodeServices are the parameter services every ROS 2 node answers.
var nodeServices = []string{"describe_parameters", "get_parameter_types", "get_parameters", "list_parameters",
	"set_parameters", "set_parameters_atomically"}

// DDS topic names of what the policy allows, and what every ROS 2 node
// needs whatever it does (else rclcpp cannot create it): the graph
// (ros_discovery_info), /rosout, /parameter_events and its own parameter
// services.
func (p Policy) ddsTopics() (publish, subscribe []string) {
	if p.everything() {
		return []string{"*"}, []string{"*"}
	}
	publish = append(publish, "ros_discovery_info", "rt/rosout", "rt/parameter_events")
	subscribe = append(subscribe, "ros_discovery_info", "rt/parameter_events")
	for _, s := range nodeServices {
		publish = append(publish, "rr/*/"+s+"Reply")
		subscribe = append(subscribe, "rq/*/"+s+"Request")
	}
	publish = append(publish, mangle(p.Publish, "rt", "")...)
	publish = append(publish, mangle(p.Call, "rq", "Request")...)
	publish = append(publish, mangle(p.Serve, "rr", "Reply")...)
	subscribe = append(subscribe, mangle(p.Subscribe, "rt", "")...)
	subscribe = append(subscribe, mangle(p.Call, "rr", "Reply")...)
	subscribe = append(subscribe, mangle(p.Serve, "rq", "Request")...)
	return publish, subscribe
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

func domains(b *bytes.Buffer, indent string) {
	fmt.Fprintf(b, "%s<domains>\n%s  <id_range>\n%s    <min>0</min>\n%s    <max>%d</max>\n%s  </id_range>\n%s</domains>\n",
		indent, indent, indent, indent, MaxDomain, indent, indent)
}

// Governance is the domain governance sros2 writes by default, for
// domains 0 to MaxDomain: no unauthenticated participant, joining
// controlled by permissions, discovery and liveliness encrypted, RTPS
// messages signed, and on every topic read and write access control with
// its metadata and data encrypted (AES-GCM).
func Governance() []byte {
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">` + "\n")
	b.WriteString("  <domain_access_rules>\n    <domain_rule>\n")
	domains(&b, "      ")
	b.WriteString(`      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>SIGN</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
`)
	return b.Bytes()
}

// permissionsTime is DDS Security's validity format (XML dateTime, UTC).
const permissionsTime = "2006-01-02T15:04:05"

// Permissions is the permissions document of the enclave name (whose
// certificate's subject is CN=name) for p, valid from notBefore to
// notAfter, in domains 0 to MaxDomain; anything p does not allow is
// denied.
func Permissions(name string, p Policy, notBefore, notAfter time.Time) ([]byte, error) {
	if err := CheckEnclaveName(name); err != nil {
		return nil, err
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(xmlHeader)
	b.WriteString(`<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">` + "\n")
	b.WriteString("  <permissions>\n")
	fmt.Fprintf(&b, "    <grant name=%q>\n", escape(name))
	fmt.Fprintf(&b, "      <subject_name>CN=%s</subject_name>\n", escape(name))
	fmt.Fprintf(&b, "      <validity>\n        <not_before>%s</not_before>\n        <not_after>%s</not_after>\n      </validity>\n",
		notBefore.UTC().Format(permissionsTime), notAfter.UTC().Format(permissionsTime))
	b.WriteString("      <allow_rule>\n")
	domains(&b, "        ")
	publish, subscribe := p.ddsTopics()
	for _, r := range []struct {
		tag    string
		topics []string
	}{{"publish", publish}, {"subscribe", subscribe}} {
		fmt.Fprintf(&b, "        <%s>\n          <topics>\n", r.tag)
		for _, t := range r.topics {
			fmt.Fprintf(&b, "            <topic>%s</topic>\n", escape(t))
		}
		fmt.Fprintf(&b, "          </topics>\n        </%s>\n", r.tag)
	}
	b.WriteString("      </allow_rule>\n")
	b.WriteString("      <default>DENY</default>\n")
	b.WriteString("    </grant>\n  </permissions>\n</dds>\n")
	return b.Bytes(), nil
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
