// Reads a SAINT.OS recording with @mcap/core (McapIndexedReader): checks
// that every channel has a schema, that the message counts match the
// file's statistics, and that every message decodes: JSON channels
// against their JSON Schema, CDR channels with
// @foxglove/rosmsg2-serialization's MessageReader and their ros2msg
// schema, using every byte. Where the robot's frames (/saint/tf, JSON)
// were derived from odometry, the odom → base_link transforms must match
// an odometry message's pose exactly. With EXPECTED, a JSON file
// {"topic": [bus payload, ...]}, each listed topic's messages must decode
// to the payloads the bus carried, in order. zstd chunks are decompressed
// by the zstd program. Prints a JSON report; exits 1 on failure.
//
//   node mcap.mjs FILE [EXPECTED]
import { open, readFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { McapIndexedReader } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { check } from "./schema.mjs";
import { parseRos2msg, sameAsBus } from "./ros2msg.mjs";

function fail(msg) {
  console.log(JSON.stringify({ error: msg }));
  process.exit(1);
}

const fh = await open(process.argv[2], "r");
const readable = {
  size: async () => BigInt((await fh.stat()).size),
  read: async (offset, size) => {
    const buf = new Uint8Array(Number(size));
    await fh.read(buf, 0, Number(size), Number(offset));
    return buf;
  },
};
const decompressHandlers = {
  zstd: (data, size) => {
    const out = execFileSync("zstd", ["-d", "-c", "-q"], { input: data, maxBuffer: Number(size) + 1024 });
    if (out.length !== Number(size)) fail(`zstd chunk: ${out.length} bytes, want ${size}`);
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  },
};
if (typeof MessageReader !== "function") fail("@foxglove/rosmsg2-serialization did not load");
const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
const decoders = new Map();
const cdrTopics = [];
const expected = process.argv[3] ? JSON.parse(await readFile(process.argv[3], "utf8")) : {};
const compared = {};
const poses = new Set(); // odometry poses, as JSON
const transforms = []; // odom -> base_link transforms from /saint/tf
const schemas = {};
for (const [id, ch] of reader.channelsById) {
  const schema = reader.schemasById.get(ch.schemaId);
  if (!schema) fail(`channel ${ch.topic} has no schema`);
  const text = new TextDecoder().decode(schema.data);
  schemas[ch.topic] = { name: schema.name, encoding: schema.encoding, messageEncoding: ch.messageEncoding };
  if (ch.messageEncoding === "json" && schema.encoding === "jsonschema") {
    const parsed = JSON.parse(text);
    decoders.set(id, (data) => {
      const msg = JSON.parse(new TextDecoder().decode(data));
      const err = check(parsed, msg);
      if (err) throw new Error(err);
      return msg;
    });
  } else if (ch.messageEncoding === "cdr" && schema.encoding === "ros2msg") {
    let cdr;
    try {
      cdr = new MessageReader(parseRos2msg(schema.name, text));
    } catch (e) {
      fail(`${ch.topic}: ros2msg schema ${schema.name}: ${e.message}`);
    }
    decoders.set(id, (data) => {
      const msg = cdr.readMessage(data);
      if (cdr.lastReadHadTrailingBytes()) {
        throw new Error(`${data.length - cdr.lastReadByteLength()} bytes left over after ${schema.name}`);
      }
      return msg;
    });
    cdrTopics.push(ch.topic);
  } else {
    fail(`${ch.topic}: unexpected encodings ${ch.messageEncoding}/${schema.encoding}`);
  }
}
const counts = {};
let total = 0;
for await (const m of reader.readMessages()) {
  const ch = reader.channelsById.get(m.channelId);
  let msg;
  try {
    msg = decoders.get(m.channelId)(m.data);
  } catch (e) {
    fail(`${ch.topic} message ${m.sequence} does not decode: ${e.message}`);
  }
  const n = counts[ch.topic] ?? 0;
  counts[ch.topic] = n + 1;
  if (expected[ch.topic]) {
    const want = expected[ch.topic][n];
    if (want === undefined) fail(`${ch.topic}: message ${n + 1}, the bus carried only ${expected[ch.topic].length}`);
    const err = sameAsBus(msg, want);
    if (err) fail(`${ch.topic} message ${n + 1} is not what the bus carried: ${err}`);
    compared[ch.topic] = (compared[ch.topic] ?? 0) + 1;
  }
  if (ch.topic === "/saint/tracks/odom" && msg) {
    const p = msg.pose.pose;
    poses.add(JSON.stringify([p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w]));
  }
  if (ch.topic === "/saint/tf") {
    const t = JSON.parse(new TextDecoder().decode(m.data)).transforms.find((t) => t.parent_frame_id === "odom");
    if (t) transforms.push(JSON.stringify([t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w]));
  }
  total++;
}
const stats = reader.statistics;
if (!stats) fail("no statistics record");
if (BigInt(total) !== stats.messageCount) fail(`read ${total} messages, statistics say ${stats.messageCount}`);
for (const [id, n] of stats.channelMessageCounts) {
  const topic = reader.channelsById.get(id).topic;
  if (BigInt(counts[topic] ?? 0) !== n) fail(`${topic}: read ${counts[topic]}, statistics say ${n}`);
}
for (const [topic, msgs] of Object.entries(expected)) {
  if ((compared[topic] ?? 0) !== msgs.length) fail(`${topic}: compared ${compared[topic] ?? 0} messages with the bus's ${msgs.length}`);
}
let posesMatched = 0;
for (const t of transforms) {
  if (!poses.has(t)) fail(`odom -> base_link transform ${t} matches no odometry message's pose`);
  posesMatched++;
}
console.log(JSON.stringify({
  cdrTopics, compared, posesMatched,
  library: reader.header.library, chunks: reader.chunkIndexes.length,
  compression: [...new Set(reader.chunkIndexes.map((c) => c.compression))], total, counts, schemas,
}));
await fh.close();
