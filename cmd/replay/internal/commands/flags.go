package commands

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/live"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
	"github.com/coordlog/coordlog/replay/query"
)

// Now is the commands' one wall clock (internal/wallclock: main sets it from COORDLOG_NOW):
// relative times count back from it and snapshots are stamped with it.
var Now = time.Now

// readFlags are the root's flags on how inputs are read.
type readFlags struct {
	verbose        bool
	maxBatchMemory int
}

// readingFlags returns the root's reading flags as cmd parsed them (the defaults for a nil cmd).
func readingFlags(cmd *cobra.Command) (readFlags, error) {
	var rf readFlags
	if cmd == nil || cmd.Flags().Lookup("verbose") == nil { // the defaults, where no command line applies
		return rf, nil
	}
	fl := cmd.Flags()
	rf.verbose, _ = fl.GetBool("verbose")
	size, _ := fl.GetString("max-batch-memory")
	n, err := parseSize(size)
	if err != nil || n < 1<<20 || n > math.MaxInt32*8 {
		return rf, usageError{fmt.Errorf("--max-batch-memory %q: give a size from 1MiB to 16GiB (bytes, or with KiB, MiB or GiB)", size)}
	}
	rf.maxBatchMemory = int(n)
	return rf, nil
}

// parseSize reads a byte count: digits, optionally followed by KiB, MiB or GiB.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("not a size: %q", s)
	}
	return n * mult, nil
}

func argsError(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s needs %s (got %s)", cmd.Name(), what, plural(int64(len(args)), "argument"))}
		}
		return nil
	}
}

// modeOf is the reading mode of --forensic.
func modeOf(forensic bool) eventlog.Mode {
	if forensic {
		return eventlog.Forensic
	}
	return eventlog.Strict
}

// replayFlags are shared by the commands that rebuild state.
type replayFlags struct {
	partitions   []int32
	pointFlags   // --at-offset, --at-time
	kafkaVersion string
	forensic     bool
	layout       string
	fromSnapshot bool // describe, offsets and restore: --from-snapshot
	// cmd is the command the flags were registered on, for the root's reading flags.
	cmd *cobra.Command
}

func (f *replayFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.Int32SliceVar(&f.partitions, "partition", nil, "only these __consumer_offsets partitions (repeatable)")
	f.pointFlags.register(cmd)
	fl.StringVar(&f.kafkaVersion, "kafka-version", "detect", "replay rules of this Kafka version: 4.0, 4.1, 4.2, 4.3 or 4.4 (detect: the release the records show wrote the log, said on stderr)")
	fl.BoolVar(&f.forensic, "forensic", false, "record violations and damaged input and continue, instead of stopping at the first")
	fl.StringVar(&f.layout, "layout", "", "record layout of ids that changed between releases (4.1+, 4.0, 3.9, streams-preview); default: the one of --kafka-version")
}

// fromSnapshotUsage is the help of --from-snapshot on describe, offsets and restore.
const fromSnapshotUsage = "start from the newest valid snapshot in <db>/snapshots and replay only the log after it (coordlog databases only)"

func (f *replayFlags) registerFromSnapshot(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.fromSnapshot, "from-snapshot", false, fromSnapshotUsage)
}

func (f *replayFlags) options() (replay.Options, error) {
	v := groupstate.DefaultKafkaVersion // detect: the replay detects it from the records (detect)
	if f.kafkaVersion != "detect" {
		var err error
		if v, err = groupstate.ParseKafkaVersion(f.kafkaVersion); err != nil {
			return replay.Options{}, usageError{err}
		}
	}
	rf, err := readingFlags(f.cmd)
	if err != nil {
		return replay.Options{}, err
	}
	opts := replay.Options{Version: v, Mode: modeOf(f.forensic), AllViolations: rf.verbose}
	if f.layout != "" {
		l, err := recordcodec.ParseLayout(f.layout)
		if err != nil {
			return replay.Options{}, usageError{err}
		}
		opts.Layout = &l
	}
	return opts, nil
}

// detect reports whether the replay detects the Kafka release that wrote the log from its
// records (--kafka-version detect, without --layout).
func (f *replayFlags) detect(opts replay.Options) bool {
	return f.kafkaVersion == "detect" && opts.Layout == nil
}

// pointFlags name a point in history: --at-offset (one offset, or partition:offset pairs) or
// --at-time (RFC 3339, relative like -2h, or Unix ms). Resolving them is replay/query's.
type pointFlags struct {
	atOffset []string
	atTime   string
}

const atOffsetUsage = "the state after the record at this offset: N on an input of one partition, P:OFFSET pairs (3:1200,7:88) on several; default: the end of the log"
const atTimeUsage = "the state at this time: RFC 3339 (2026-02-20T14:05:00Z), relative (-2h, -1d) or Unix ms; each partition is cut before its first record stamped later"

func (f *pointFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.atOffset, "at-offset", nil, atOffsetUsage)
	fl.StringVar(&f.atTime, "at-time", "", atTimeUsage)
}

// point parses the flags; both at once is a usage error.
func (f *pointFlags) point() (query.Point, error) {
	switch {
	case len(f.atOffset) > 0 && f.atTime != "":
		return query.Point{}, usageError{errors.New("give --at-offset or --at-time, not both")}
	case len(f.atOffset) > 0:
		p, err := query.ParseOffsets(f.atOffset)
		if err != nil {
			return p, usageError{err}
		}
		return p, nil
	case f.atTime != "":
		t, err := query.ParseTime(f.atTime, Now())
		if err != nil {
			return query.Point{}, usageError{fmt.Errorf("--at-time: %w", err)}
		}
		return query.AtTime(t), nil
	}
	return query.End(), nil
}

func (f *pointFlags) set() bool { return len(f.atOffset) > 0 || f.atTime != "" }

// parseTimeFlag reads a time flag (--since, --until) as --at-time takes it.
func parseTimeFlag(name, value string) (time.Time, error) {
	t, err := query.ParseTime(value, Now())
	if err != nil {
		return t, usageError{fmt.Errorf("--%s: %w", name, err)}
	}
	return t, nil
}

// liveFlags read __consumer_offsets from a running cluster instead of files (eventlog/live).
type liveFlags struct {
	bootstrap, topic                 string
	tlsCA, tlsCert, tlsKey           string
	saslMech, saslUser, saslPassword string
	tls, tlsInsecure, follow         bool
	interval                         time.Duration
}

// registerAs registers the flags with the source topic's flag named topicFlag: commands whose
// --topic selects a group's topics call it --offsets-topic.
func (f *liveFlags) registerAs(cmd *cobra.Command, topicFlag string) {
	fl := cmd.Flags()
	fl.StringVar(&f.bootstrap, "bootstrap-server", "", "read __consumer_offsets from this running Kafka cluster (HOST:PORT[,HOST:PORT...]) instead of files")
	fl.StringVar(&f.topic, topicFlag, live.DefaultTopic, "with --bootstrap-server: the topic to read")
	fl.BoolVar(&f.tls, "tls", false, "with --bootstrap-server: connect with TLS (implied by --tls-ca/--tls-cert)")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of the CA certificates to trust (default: the system's)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM client certificate (with --tls-key) for mutual TLS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fl.BoolVar(&f.tlsInsecure, "tls-insecure-skip-verify", false, "do not verify the brokers' certificates (testing only)")
	fl.StringVar(&f.saslMech, "sasl-mechanism", "", "SASL mechanism: plain, scram-sha-256 or scram-sha-512")
	fl.StringVar(&f.saslUser, "sasl-user", "", "SASL user name")
	fl.StringVar(&f.saslPassword, "sasl-password", "", "SASL password (default: $COORDLOG_SASL_PASSWORD)")
	fl.BoolVar(&f.follow, "follow", false, "with --bootstrap-server: keep reading as the log grows, until interrupted")
	fl.DurationVar(&f.interval, "follow-interval", time.Second, "with --follow: how often to look for new records")
}

func (f *liveFlags) set() bool { return f.bootstrap != "" }

// args accepts no positional argument with --bootstrap-server and n without.
func (f *liveFlags) args(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if f.interval <= 0 {
			return usageError{fmt.Errorf("--follow-interval %s: give a positive duration", f.interval)}
		}
		if f.set() {
			if len(args) != 0 {
				return usageError{fmt.Errorf("%s --bootstrap-server reads the cluster; it takes no input directory (got %q)", cmd.Name(), args)}
			}
			return nil
		}
		if f.follow {
			return usageError{errors.New("--follow needs --bootstrap-server")}
		}
		return argsError(n, what)(cmd, args)
	}
}

// noFollow refuses --follow on the commands that print once.
func (f *liveFlags) noFollow(cmd *cobra.Command) error {
	if f.follow {
		return usageError{fmt.Errorf("%s does not follow the log: --follow is for describe and import", cmd.Name())}
	}
	return nil
}

// config turns the flags into the cluster's connection settings.
func (f *liveFlags) config() cluster.Config {
	cfg := cluster.Config{Bootstrap: cluster.ParseBootstrap(f.bootstrap)}
	if f.tls || f.tlsCA != "" || f.tlsCert != "" || f.tlsInsecure {
		cfg.TLS = &cluster.TLSConfig{CAFile: f.tlsCA, CertFile: f.tlsCert, KeyFile: f.tlsKey, InsecureSkipVerify: f.tlsInsecure}
	}
	if f.saslMech != "" || f.saslUser != "" {
		pass := f.saslPassword
		if pass == "" {
			pass = os.Getenv("COORDLOG_SASL_PASSWORD")
		}
		cfg.SASL = &cluster.SASLConfig{Mechanism: f.saslMech, User: f.saslUser, Password: pass}
	}
	return cfg
}

// cluster connects coordlog's admin client (package cluster) with the flags' settings.
func (f *liveFlags) cluster() (*cluster.Client, error) {
	c, err := f.config().Connect()
	return c, commandLine(err)
}

// thresholdFlags set what the analysis marks (timeline, check and report).
type thresholdFlags struct {
	slowRebalance, longTxn, retention, session string
}

func (f *thresholdFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.slowRebalance, "slow-rebalance", "1m", "mark rebalances that take longer than this to converge")
	fl.StringVar(&f.longTxn, "long-transaction", "1m", "mark transactions open longer than this")
	fl.StringVar(&f.retention, "offsets-retention", "infer", "the brokers' offsets.retention.minutes, to tell expired offsets from deleted ones (infer: bound it from the log)")
	fl.StringVar(&f.session, "session-timeout", "", "the shortest session timeout of the brokers' consumer, share and streams groups (group.consumer.min.session.timeout.ms or a group's config), to tell a fenced member from one that left (default: Kafka's 45 s, assumed); classic members' records carry their own")
}

// options parses the threshold flags.
func (f *thresholdFlags) options() (explain.Options, error) {
	var o explain.Options
	for _, x := range []struct {
		flag, v string
		to      *int64
	}{{"--slow-rebalance", f.slowRebalance, &o.SlowRebalanceMs}, {"--long-transaction", f.longTxn, &o.LongTransactionMs},
		{"--offsets-retention", f.retention, &o.OffsetsRetentionMs}, {"--session-timeout", f.session, &o.SessionTimeoutMs}} {
		if (x.flag == "--offsets-retention" && x.v == "infer") || (x.flag == "--session-timeout" && x.v == "") {
			continue // 0: inferred from the log, or Kafka's default assumed
		}
		d, err := query.ParseSpan(x.v)
		if err != nil {
			return o, usageError{fmt.Errorf("%s: %w", x.flag, err)}
		}
		if d.Milliseconds() <= 0 {
			return o, usageError{fmt.Errorf("%s must be longer than 0", x.flag)}
		}
		*x.to = d.Milliseconds()
	}
	return o, nil
}

// selectionFlags select committed offsets by group and by the groups' topics (offsets and
// restore).
type selectionFlags struct {
	group           string
	topics          []string
	topicPartitions []string
}

func (f *selectionFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.group, "group", "", "only this group")
	fl.StringSliceVar(&f.topics, "topic", nil, "only offsets of this topic (repeatable)")
	fl.StringArrayVar(&f.topicPartitions, "topic-partition", nil, "only offsets of this partition of a topic: TOPIC:P[,P...] (repeatable; --partition selects __consumer_offsets partitions)")
}

func (f *selectionFlags) selection() (query.OffsetSelection, error) {
	tps, err := query.ParseTopicPartitions(f.topicPartitions)
	if err != nil {
		return query.OffsetSelection{}, usageError{err}
	}
	sel := query.OffsetSelection{Group: f.group, Filter: query.OffsetFilter{TopicPartitions: tps}}
	if len(f.topics) > 0 {
		sel.Filter.Topics = map[string]bool{}
		for _, t := range f.topics {
			sel.Filter.Topics[t] = true
		}
	}
	return sel, nil
}

// parseGroupTypes reads --type's group types (nil: every type).
func parseGroupTypes(specs []string) (map[groupstate.GroupType]bool, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[groupstate.GroupType]bool{}
	for _, s := range specs {
		t := groupstate.GroupType(strings.ToLower(strings.TrimSpace(s)))
		switch t {
		case groupstate.GroupTypeClassic, groupstate.GroupTypeConsumer, groupstate.GroupTypeShare, groupstate.GroupTypeStreams:
			out[t] = true
		default:
			return nil, usageError{fmt.Errorf("--type %q: want classic, consumer, share or streams", s)}
		}
	}
	return out, nil
}
