// Connects to a SAINT.OS Foxglove WebSocket server with Foxglove's own
// client (@foxglove/ws-protocol FoxgloveClient), lists the advertised
// channels, subscribes to odometry and the head state and decodes them
// with their schemas (CDR with ros2msg schemas, through
// @foxglove/rosmsg2-serialization), subscribes to the head camera (which
// streams only on demand: the subscription must start it) and decodes a
// frame, publishes a head move through client publish and waits for the
// head state to follow. It gets every parameter as Foxglove's Parameters
// panel does (getParameters with no names), sets the server's name and
// tries an out-of-range port (refused with a status naming the
// parameter). Prints a JSON report; exits 1 on failure.
//
//   node client.mjs ws://127.0.0.1:PORT/?token=TOKEN
import wsProtocol from "@foxglove/ws-protocol"; // CommonJS: no named exports

const { FoxgloveClient } = wsProtocol;
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { check } from "./schema.mjs";
import { parseRos2msg } from "./ros2msg.mjs";

const url = process.argv[2];
const target = 25; // degrees of pan to publish
const serverName = "Foxglove Rover"; // set as /server.system.server_name
const camera = "/saint/head/camera/image_raw";
const report = { channels: [], decoded: {}, statuses: [], headFollowed: false };

function fail(msg) {
  console.log(JSON.stringify({ ...report, error: msg }));
  process.exit(1);
}
setTimeout(() => fail("timed out"), 40000).unref();

// Node.js's own WebSocket, or the ws package where it has none.
const WS = globalThis.WebSocket ?? (await import("ws")).default;
const ws = new WS(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
const client = new FoxgloveClient({ ws });
const channels = new Map(); // id -> channel
const subs = new Map(); // subscription id -> channel
let serverInfo;
let published = false;
let pubChannel;

client.on("error", (e) => fail(`client error: ${e?.message ?? e}`));
client.on("close", () => {
  if (!report.done) fail("connection closed");
});
client.on("serverInfo", (info) => {
  serverInfo = info;
  report.serverInfo = { name: info.name, capabilities: info.capabilities, supportedEncodings: info.supportedEncodings };
  if (!info.capabilities.includes("parameters")) fail("server lacks the parameters capability");
  client.getParameters([], "get-all-params");
});
client.on("parameterValues", ({ parameters, id }) => {
  const values = new Map(parameters.map((p) => [p.name, p.value]));
  if (id === "get-all-params") {
    report.params = { count: parameters.length, serverNameBefore: values.get("/server.system.server_name"), portBefore: values.get("/server.livelink.data_port") };
    if (typeof report.params.serverNameBefore !== "string") fail(`no /server.system.server_name among ${[...values.keys()]}`);
    // A port out of range first: refused with a status, nothing changed.
    client.setParameters([{ name: "/server.livelink.data_port", value: 0 }], "set-bad");
    client.setParameters([{ name: "/server.system.server_name", value: serverName }], "set-name");
  } else if (id === "set-bad") {
    report.params.portAfterRefusal = values.get("/server.livelink.data_port");
  } else if (id === "set-name") {
    report.params.serverNameAfter = values.get("/server.system.server_name");
    if (report.params.serverNameAfter !== serverName) fail(`server name ${report.params.serverNameAfter} after setting it to ${serverName}`);
    report.params.refusal = report.statuses.find((s) => s.includes("/server.livelink.data_port"));
    if (!report.params.refusal) fail("no status for the out-of-range port");
    finish();
  }
});
client.on("status", (s) => report.statuses.push(s.message));
client.on("advertise", (chs) => {
  for (const ch of chs) {
    channels.set(ch.id, ch);
    report.channels.push(ch.topic);
    if (ch.topic === "/saint/tracks/odom" || ch.topic === "/saint/head/state" || ch.topic === camera) {
      // Each has a ROS 2 type: nav_msgs/msg/Odometry, saint_os/msg/HeadState,
      // sensor_msgs/msg/Image.
      if (ch.encoding !== "cdr" || ch.schemaEncoding !== "ros2msg") fail(`${ch.topic}: encoding ${ch.encoding}/${ch.schemaEncoding}`);
      try {
        ch.reader = new MessageReader(parseRos2msg(ch.schemaName, ch.schema));
      } catch (e) {
        fail(`${ch.topic}: schema ${ch.schemaName}: ${e.message}`);
      }
      subs.set(client.subscribe(ch.id), ch);
    }
  }
});
client.on("message", ({ subscriptionId, data }) => {
  const ch = subs.get(subscriptionId);
  if (!ch) fail(`message for unknown subscription ${subscriptionId}`);
  let msg;
  try {
    msg = ch.reader.readMessage(data);
  } catch (e) {
    fail(`${ch.topic} does not decode with its schema: ${e.message}`);
  }
  if (ch.reader.lastReadHadTrailingBytes()) fail(`${ch.topic}: bytes left over after ${ch.schemaName}`);
  if (ch.topic === camera) {
    // rgb8, every row and pixel there.
    if (!(msg.width > 0 && msg.height > 0 && msg.encoding === "rgb8" && msg.step >= 3 * msg.width && msg.data.length === msg.height * msg.step)) {
      fail(`${camera}: frame ${msg.width}x${msg.height} ${msg.encoding} step ${msg.step} with ${msg.data.length} bytes`);
    }
    report.decoded[camera] = (report.decoded[camera] ?? 0) + 1;
    report.cameraFrame = { width: msg.width, height: msg.height, encoding: msg.encoding };
    finish();
    return;
  }
  const err = ch.topic === "/saint/head/state"
    ? check({ type: "object", properties: { pan: { type: "number" }, tilt: { type: "number" } } }, msg)
    : check({ type: "object", properties: { pose: { type: "object", properties: { pose: { type: "object", properties: { position: { type: "object", properties: { x: { type: "number" } } } } } } } } }, msg);
  if (err) fail(`${ch.topic}: ${err}`);
  report.decoded[ch.topic] = (report.decoded[ch.topic] ?? 0) + 1;
  if (ch.topic !== "/saint/head/state") return;
  if (!published && report.decoded["/saint/tracks/odom"] > 0) {
    if (!serverInfo?.capabilities.includes("clientPublish")) fail("server lacks clientPublish");
    pubChannel = client.advertise({ topic: "/saint/command/head/move", encoding: "json", schemaName: "saint.command.head.move" });
    // A move outside the head's range first: the server must refuse it
    // with a status and move nothing.
    client.sendMessage(pubChannel, new TextEncoder().encode(JSON.stringify({ pan: 500 })));
    client.sendMessage(pubChannel, new TextEncoder().encode(JSON.stringify({ pan: target })));
    published = true;
    report.panBefore = msg.pan;
  } else if (published && !report.headFollowed && Math.abs(msg.pan - target) < 1) {
    report.headFollowed = true;
    report.panAfter = msg.pan;
    if (!report.statuses.some((s) => s.includes("pan"))) fail("no status for the out-of-range move");
    finish();
  }
});

// finish reports success once the head followed, a camera frame came and
// the server's name was set.
function finish() {
  if (!report.headFollowed || !report.cameraFrame || !report.params?.serverNameAfter || report.done) return;
  report.done = true;
  console.log(JSON.stringify(report));
  client.close();
  process.exit(0);
}
