package recording

import (
	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/server/activity"
)

// TopicActivity carries the server's activity log (activity.Event, as the
// WebSocket API's "logs" topic shows it) on the bus, so recordings and
// Foxglove have it beside the robot's topics.
const TopicActivity = "/saint/activity"

// PublishActivity publishes every new event of l on TopicActivity until
// cancel is called. Publishing does not block, as the activity log's
// subscribers must not.
func PublishActivity(l *activity.Log, b bus.Bus) (cancel func()) {
	return l.Subscribe(func(e activity.Event) { _ = b.Publish(TopicActivity, e) })
}
