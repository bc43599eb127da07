package ros2

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadParsesTypes(t *testing.T) {
	reg, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	odom, ok := reg.Message("nav_msgs/Odometry")
	if !ok {
		t.Fatal("nav_msgs/Odometry not loaded")
	}
	if got, want := odom.DDSTypeName(), "nav_msgs::msg::dds_::Odometry_"; got != want {
		t.Errorf("DDSTypeName = %q, want %q", got, want)
	}
	pwc, _ := reg.Message("geometry_msgs/PoseWithCovariance")
	if got := pwc.Fields[1].Type; got.Name != "float64" || got.Size != 36 || got.Sequence {
		t.Errorf("covariance type = %+v, want float64[36]", got)
	}
	adopt, ok := reg.Service("saint_os/AdoptNode")
	if !ok {
		t.Fatal("saint_os/AdoptNode not loaded")
	}
	if got, want := adopt.Request.DDSTypeName(), "saint_os::srv::dds_::AdoptNode_Request_"; got != want {
		t.Errorf("request type = %q, want %q", got, want)
	}
	var names []string
	for _, f := range adopt.Response.Fields {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), "success,message,assigned_topic_prefix"; got != want {
		t.Errorf("AdoptNode response fields = %s, want %s", got, want)
	}
	gpio, _ := reg.Message("saint_os/NodeGPIOStatus")
	if got := gpio.Fields[3].Type; got.Name != "saint_os/GPIOPin" || !got.Sequence {
		t.Errorf("pins type = %+v, want saint_os/GPIOPin[]", got)
	}
}

func TestLoadRejectsBadDefinitions(t *testing.T) {
	for _, tc := range []struct {
		name, path, src, want string
	}{
		{"unknown type", "p/msg/A.msg", "Missing m\n", "p/Missing is not defined"},
		{"bare Header", "p/msg/A.msg", "Header header\n", "write std_msgs/Header"},
		{"bad name", "p/msg/A.msg", "int32 Speed\n", "lower_snake_case"},
		{"twice", "p/msg/A.msg", "int32 a\nint32 a\n", "given twice"},
		{"bounded", "p/msg/A.msg", "int32[<=3] a\n", "bounded"},
		{"no response", "p/srv/S.srv", "int32 a\n", "separated by ---"},
		{"wrong folder", "p/msg/S.srv", "---\n", "srv/ folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFS(fstest.MapFS{tc.path: {Data: []byte(tc.src)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
