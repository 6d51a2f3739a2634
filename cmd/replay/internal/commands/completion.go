package commands

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
	"github.com/coordlog/coordlog/replay/session"
)

// formats are the --format values of each command, by command path: shell completion offers
// them (the commands check them themselves).
var formats = map[string][]string{
	"replay decode":          {"text", "jsonl"},
	"replay describe":        {"table", "json"},
	"replay groups":          {"table", "json"},
	"replay offsets":         {"table", "json", "csv"},
	"replay offsets restore": {"table", "json"},
	"replay diff":            {"table", "json"},
	"replay restart":         {"text", "json"},
}

// registerCompletions gives shell completion (replay completion bash|zsh|fish|powershell) the
// values of the flags that take a fixed set, and the group ids of the input named on the
// command line for --group. run calls it only when the shell asks for completions (cobra keeps
// the functions in a map of its own, for the life of the process).
func registerCompletions(root *cobra.Command) {
	var versions []string
	for _, v := range groupstate.KafkaVersions {
		versions = append(versions, v.String())
	}
	groupTypes := []string{"classic", "consumer", "share", "streams"}
	var recordTypes []string
	for t := recordcodec.RecordType(0); t < recordcodec.NumRecordTypes; t++ {
		recordTypes = append(recordTypes, t.String())
	}
	recordTypes = append(recordTypes, "control")
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		complete := func(flag string, fn cobra.CompletionFunc) {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, fn)
			}
		}
		if vs, ok := formats[c.CommandPath()]; ok {
			complete("format", fixed(vs...))
		}
		complete("kafka-version", fixed(versions...))
		complete("layout", fixed("4.1+", "4.0", "3.9", "streams-preview"))
		complete("state", fixed(query.ValidStates...))
		complete("progress", fixed("auto", "bar", "lines", "none"))
		complete("min-severity", fixed("high", "medium", "low"))
		complete("protocol", fixed("streams", "consumer"))
		if c.Name() == "decode" {
			complete("type", fixed(recordTypes...))
		} else {
			complete("type", fixed(groupTypes...))
		}
		complete("group", completeGroups)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// completeGroups completes --group with the group ids of the input already on the command line
// (at the end of its log): groups, and ids that only have committed offsets.
func completeGroups(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ids, err := groupIDs(cmd, args[0], cmd.Flags())
	if err != nil {
		cobra.CompDebugln("group ids of "+args[0]+": "+err.Error(), true)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, id := range ids {
		if strings.HasPrefix(id, toComplete) {
			out = append(out, id)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// groupIDs replays path to its end (forensic: completion never stops at damage) and returns
// every group id it knows, sorted.
func groupIDs(cmd *cobra.Command, path string, fl *pflag.FlagSet) ([]string, error) {
	src, err := session.Open(cmd.Context(), session.Input{Path: path, Mode: eventlog.Forensic})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	opts := replay.Options{Version: groupstate.DefaultKafkaVersion, Mode: eventlog.Forensic}
	if f := fl.Lookup("kafka-version"); f != nil {
		if v, err := groupstate.ParseKafkaVersion(f.Value.String()); err == nil {
			opts.Version = v
		}
	}
	r, err := session.Replay(cmd.Context(), src, session.Request{Options: opts})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, st := range r.Views() {
		ids = append(ids, st.GroupIDs()...)
		ids = append(ids, st.OffsetGroupIDs()...)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}
