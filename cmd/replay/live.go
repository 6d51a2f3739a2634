package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/coordlog/coordlog/cluster"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/live"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/replay"
)

// liveFlags read __consumer_offsets from a running cluster instead of files (eventlog/live).
type liveFlags struct {
	bootstrap    string
	topic        string
	tls          bool
	tlsCA        string
	tlsCert      string
	tlsKey       string
	tlsInsecure  bool
	saslMech     string
	saslUser     string
	saslPassword string
	follow       bool
	interval     time.Duration
}

func (f *liveFlags) register(cmd *cobra.Command) { f.registerAs(cmd, "topic") }

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

// liveFlagNames are the flags that give each setting of cluster.Config.
var liveFlagNames = map[cluster.Setting]string{
	cluster.SettingBootstrap: "--bootstrap-server", cluster.SettingTLSCA: "--tls-ca", cluster.SettingTLSCert: "--tls-cert",
	cluster.SettingTLSKey: "--tls-key", cluster.SettingSASLMechanism: "--sasl-mechanism", cluster.SettingSASLUser: "--sasl-user",
}

// configUsage turns a cluster.ConfigError into a usage error naming the flags.
func configUsage(err error) error {
	var ce *cluster.ConfigError
	if errors.As(err, &ce) {
		return usageError{errors.New(ce.Render(func(s cluster.Setting) string { return liveFlagNames[s] }))}
	}
	return err
}

// clientOpts turns the flags into franz-go client options.
func (f *liveFlags) clientOpts() ([]kgo.Opt, error) {
	opts, err := f.config().ClientOptions()
	return opts, configUsage(err)
}

// cluster connects coordlog's admin client (package cluster) with the same options.
func (f *liveFlags) cluster() (*cluster.Client, error) {
	c, err := f.config().Connect()
	return c, configUsage(err)
}

// open connects to the cluster; the source's requests are bounded by ctx.
func (f *liveFlags) open(ctx context.Context) (*source, *live.Source, error) {
	opts, err := f.clientOpts()
	if err != nil {
		return nil, nil, err
	}
	src, err := live.Open(ctx, opts, live.Options{Topic: f.topic})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s from %s: %w", f.topic, f.bootstrap, err)
	}
	return &source{Source: src, path: "kafka://" + f.bootstrap + "/" + f.topic, close: src.Close}, src, nil
}

// replayLive is replayInput for a live cluster: it replays the selected partitions up to their
// high watermarks (or to where --at-offset / --at-time falls).
func replayLive(cmd *cobra.Command, rf *replayFlags, lf *liveFlags, stderr io.Writer) (*replayed, error) {
	return replayLiveObserved(cmd, rf, lf, nil, stderr)
}

// replayLiveObserved is replayLive with an observer per partition (independent of one another).
func replayLiveObserved(cmd *cobra.Command, rf *replayFlags, lf *liveFlags, observer func(p int32) replay.Observer, stderr io.Writer) (*replayed, error) {
	return replayLiveWith(cmd, rf, lf, observer, true, stderr)
}

// replayLiveSequential is replayLive with observers that print as they go: one partition
// after the other.
func replayLiveSequential(cmd *cobra.Command, rf *replayFlags, lf *liveFlags, observer func(p int32) replay.Observer, stderr io.Writer) (*replayed, error) {
	return replayLiveWith(cmd, rf, lf, observer, false, stderr)
}

// noFollow refuses --follow on the commands that print once.
func (f *liveFlags) noFollow(cmd *cobra.Command) error {
	if f.follow {
		return usageError{fmt.Errorf("%s does not follow the log: --follow is for describe and import", cmd.Name())}
	}
	return nil
}

func replayLiveWith(cmd *cobra.Command, rf *replayFlags, lf *liveFlags, observer func(p int32) replay.Observer, parallel bool, stderr io.Writer) (*replayed, error) {
	opts, _, err := rf.options()
	if err != nil {
		return nil, err
	}
	at, err := rf.point()
	if err != nil {
		return nil, err
	}
	if lf.follow && !at.IsEnd() {
		return nil, usageError{errors.New("--follow and --at-offset/--at-time exclude each other")}
	}
	if rf.fromSnapshot {
		return nil, usageError{errors.New("--from-snapshot reads a coordlog database, not a live cluster")}
	}
	in, _, err := lf.open(cmd.Context())
	if err != nil {
		return nil, err
	}
	r, err := replaySelected(cmd, in, rf, at, opts, observer, parallel, stderr)
	if err != nil {
		in.close()
		return nil, err
	}
	return r, nil
}

// followUpdates, with --follow, replays what the cluster appends every --follow-interval and
// calls emit whenever the state moved on, until the context ends (Ctrl-C), which is a clean
// exit. Without --follow it returns at once.
func (f *liveFlags) followUpdates(ctx context.Context, r *replayed, stderr io.Writer, emit func() error) error {
	if !f.follow {
		return nil
	}
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		moved := false
		for _, res := range r.results {
			e := res.Engine
			before := e.NextOffset()
			if err := e.Run(ctx, r.in, math.MaxInt64); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("follow partition %d at offset %d: %w", e.Partition(), e.NextOffset(), err)
			}
			moved = moved || e.NextOffset() != before
		}
		if moved {
			fmt.Fprintf(stderr, "--- %s: state updated\n", time.Now().UTC().Format(time.RFC3339))
			if err := emit(); err != nil {
				return err
			}
		}
	}
}

// runImportLive imports from a running cluster into a Pebble log; with --follow it keeps
// importing what the cluster appends (each round resumes where the database ends).
func runImportLive(cmd *cobra.Command, f importFlags, stdout, stderr io.Writer) error {
	ctx := cmd.Context()
	in, src, err := f.live.open(ctx)
	if err != nil {
		return err
	}
	defer in.close()
	parts, err := input.SelectPartitions(src, f.partitions)
	if err != nil {
		return usageError{err}
	}
	if err := input.CheckDBPath(f.db); err != nil {
		return usageError{err}
	}
	held, err := lockDatabase(f.db, "replay import --bootstrap-server")
	if err != nil {
		return err
	}
	defer held.Release()
	// What the database holds already is compared with the topic once, before the database
	// is opened for writing (a refused topic leaves it as it was); each later round only
	// appends what this command read from the same topic.
	l, err := pebblelog.Open(f.db, &pebblelog.Options{BeforeWrite: func(ro *pebblelog.Log) error {
		_, err := pebblelog.CheckOverlap(ctx, src, ro, parts, nil)
		return err
	}})
	if errors.Is(err, pebblelog.ErrOtherLog) {
		return fmt.Errorf("import refused: %w", err)
	}
	if err != nil {
		return err
	}
	defer l.Close()
	round := func() (pebblelog.ImportProgress, error) {
		return pebblelog.Import(ctx, src, l, pebblelog.ImportOptions{Partitions: parts, OverlapChecked: true})
	}
	start := time.Now()
	res, err := round()
	report := func(res pebblelog.ImportProgress, elapsed time.Duration) {
		for _, p := range parts {
			if first, next, oerr := l.Offsets(p); oerr == nil {
				fmt.Fprintf(stdout, "partition %d: offsets %d..%d in the log (next offset %d)\n", p, first, next-1, next)
			}
		}
		fmt.Fprintf(stdout, "imported %s, %s, %s from %s in %s into %s\n",
			plural(res.Batches, "batch/batches"), plural(res.Records, "record"), plural(res.Bytes, "byte"), in.path, elapsed.Round(time.Millisecond), f.db)
	}
	report(res, time.Since(start))
	if err != nil {
		return fmt.Errorf("import stopped; everything before it is imported and a re-run resumes: %w", err)
	}
	if !f.live.follow {
		return nil
	}
	t := time.NewTicker(f.live.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		start := time.Now()
		res, err := round()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("import stopped; everything before it is imported and a re-run resumes: %w", err)
		}
		if res.Batches > 0 {
			report(res, time.Since(start))
		}
	}
}
