package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/saint-os/saint/record"
)

const mcapUsage = "usage: saintctl mcap info FILE [--json]"

// mcapCmd summarises a recording: its topics with message counts, rates,
// encodings and schemas, and its time range. A damaged file is summarised
// as far as it is readable, then the error (with its byte offset) is
// returned.
func mcapCmd(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "info" {
		return errors.New(mcapUsage)
	}
	f := flag.NewFlagSet("mcap info", flag.ContinueOnError)
	asJSON := f.Bool("json", false, "print the summary as JSON")
	pos, err := parseInterleaved(f, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(mcapUsage)
	}
	sum, rerr := record.Summarize(pos[0])
	if sum.Path == "" {
		return rerr // not even opened
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
		return rerr
	}
	printSummary(out, sum)
	return rerr
}

func printSummary(out io.Writer, s record.Summary) {
	complete := "yes"
	if !s.Complete {
		complete = "no (no footer)"
	}
	fmt.Fprintf(out, "file:      %s (%d bytes)\n", s.Path, s.Size)
	fmt.Fprintf(out, "library:   %s\n", s.Library)
	fmt.Fprintf(out, "complete:  %s\n", complete)
	fmt.Fprintf(out, "messages:  %d\n", s.Messages)
	if s.Messages > 0 {
		fmt.Fprintf(out, "start:     %s\n", s.Start.Format(time.RFC3339Nano))
		fmt.Fprintf(out, "end:       %s\n", s.End.Format(time.RFC3339Nano))
		fmt.Fprintf(out, "duration:  %.3f s\n", s.Duration().Seconds())
	}
	for k, v := range s.Metadata {
		fmt.Fprintf(out, "metadata:  %s=%s\n", k, v)
	}
	fmt.Fprintf(out, "topics:    %d\n", len(s.Topics))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TOPIC\tMESSAGES\tRATE (Hz)\tENCODING\tSCHEMA")
	for _, t := range s.Topics {
		rate := "-"
		if d := t.Last.Sub(t.First).Seconds(); t.Messages > 1 && d > 0 {
			rate = fmt.Sprintf("%.1f", float64(t.Messages-1)/d)
		}
		schema := t.SchemaName
		if t.SchemaEncoding != "" {
			schema += " (" + t.SchemaEncoding + ")"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", t.Topic, t.Messages, rate, t.MessageEncoding, schema)
	}
	_ = tw.Flush()
	for _, p := range s.Problems {
		fmt.Fprintf(out, "problem:   %s\n", p)
	}
}

const recordUsage = "usage: saintctl record start [--max-mb N] [--max-minutes N] | stop | status"

// recordCmd starts, stops or shows the server's recording.
func recordCmd(ctx context.Context, c *client, out io.Writer, args []string) error {
	if len(args) == 0 {
		return errors.New(recordUsage)
	}
	switch args[0] {
	case "start":
		f := flag.NewFlagSet("record start", flag.ContinueOnError)
		maxMB := f.Float64("max-mb", 0, "start a new file after this many megabytes (0: no limit)")
		maxMin := f.Float64("max-minutes", 0, "start a new file after this many minutes (0: no limit)")
		if err := f.Parse(args[1:]); err != nil {
			return err
		}
		params := map[string]any{}
		if *maxMB > 0 {
			params["max_bytes"] = int64(*maxMB * 1e6)
		}
		if *maxMin > 0 {
			params["max_duration_s"] = *maxMin * 60
		}
		return printCall(ctx, c, out, "management", "record_start", params)
	case "stop":
		return printCall(ctx, c, out, "management", "record_stop", nil)
	case "status":
		return printCall(ctx, c, out, "management", "record_status", nil)
	}
	return errors.New(recordUsage)
}
