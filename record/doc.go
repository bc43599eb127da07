// Package record keeps runs as MCAP files (https://mcap.dev), the log
// format of ROS 2 bags that Foxglove, rosbag2, the mcap CLI and plotting
// tools read, and plays them back.
//
// # Recording
//
// A Recorder subscribes to every bus topic ("/saint/#") and writes each
// message, stamped with the executor's clock (virtual time in the
// simulator), to an MCAP file: chunked, zstd-compressed, with CRCs and
// the usual summary (statistics, chunk and message indexes) written when
// the file is closed. A file rolls over to the next one when it reaches
// Options.MaxBytes or spans Options.MaxDuration, so a long run leaves
// several complete files instead of one huge one.
//
// Each topic becomes one MCAP channel. How a topic's bus payload (JSON) is
// stored is an Encoding chosen per topic by WriterOptions.Encoding
// (DefaultEncoding when nil). A topic with a ROS 2 interface type (the
// ones the ROS 2 bridge maps, bridge.BusTypes) is stored as rosbag2 stores
// it (ROS2): "cdr" messages, XCDR1 with the encapsulation header, made by
// package ros2's encoder, with a "ros2msg" schema named "pkg/msg/Type"
// holding the .msg text and its dependencies. Every other topic is JSON:
// the payload as it is with a JSON Schema inferred from the topic's first
// message ("jsonschema" schema, "json" message encoding), or, through
// Fixed, a published schema (foxglove.FrameTransforms for
// TopicTransforms). JSONEncoding stores every topic as JSON.
//
// A Recorder stops with an error when its file cannot be written (a full
// disk); what is on disk stays readable.
//
// # Crashes
//
// The file is written without user-space buffering and a chunk is closed
// when it holds WriterOptions.ChunkBytes or spans WriterOptions.FlushEvery
// of log time (512 KiB, one second by default), so
// a recorder killed with SIGKILL leaves a file whose summary and footer
// are missing but whose complete chunks are all on disk. Read, Summarize
// and Replay read such a file record by record, keep every complete
// chunk, and report where and why the rest was unreadable (a *FileError
// with the byte offset).
//
// # Replay
//
// Replay publishes a recording's messages onto a bus at their recorded
// pace (scaled by Speed), on an executor's timers, so under the
// simulator's virtual clock a replay is as deterministic as the run. CDR
// messages go back onto the bus as the JSON it carried, decoded (Decoder)
// with the definitions in the file's own schema.
package record
