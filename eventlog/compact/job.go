package compact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/pebblelog"
	"github.com/coordlog/coordlog/eventlog/segment"
)

// VerifyFunc is the proof run before anything is replaced: it must replay original and
// compacted (partition by partition, parts) and return an error when their states differ. It
// lives outside this package because eventlog may not import replay.
type VerifyFunc func(ctx context.Context, original, compacted eventlog.Source, parts []int32) error

// Job is one offline compaction: read Input (Kafka segments, a partition directory or a log
// directory holding __consumer_offsets-N directories, or a coordlog Pebble log), write the
// compacted log in the same format to a staging directory, prove it (Verify), then publish it
// atomically: rename to Output, or swap it with Input (InPlace).
type Job struct {
	Input   string
	Output  string // the new log (must not exist); empty with InPlace
	InPlace bool
	Options Options
	// Mode reads the input strictly (the first damaged batch stops the job before anything is
	// published) or forensically (damage is skipped, reported, and left out of the output).
	Mode         eventlog.Mode
	SegmentBytes int64
	DryRun       bool
	Verify       VerifyFunc
	KeepBackup   bool
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
}

// Result is what a job did.
type Result struct {
	Partitions []int32
	Stats      map[int32]Stats
	Total      Stats
	Report     *eventlog.Report // segment inputs: warnings and (forensic) problems
	Published  string           // where the compacted log is now ("" for a dry run)
	Already    bool             // Output already held this job's result: nothing done
}

// Manifest is written into the compacted log (ManifestName) before it is published, so that a
// re-run recognizes a finished job and so that the log says what it was made from.
type Manifest struct {
	Input           string        `json:"input"`
	Fingerprint     []string      `json:"input_fingerprint"`
	Now             time.Time     `json:"now"`
	DeleteRetention time.Duration `json:"delete_retention"`
	Stats           Stats         `json:"stats"`
}

// ManifestName is the manifest file in a compacted log (ignored by Kafka, Pebble and the
// segment reader alike: it is neither a segment nor a Pebble file).
const ManifestName = "coordlog-compact.json"

func (j *Job) logf(format string, args ...any) {
	if j.Log != nil {
		j.Log(format, args...)
	}
}

// keptFiles are the partition files that stay valid for the compacted segments: the topic id
// and the leader epoch history do not depend on which records survive. Indexes, producer
// snapshots and the transaction index do, so they are left out and Kafka rebuilds them when
// it loads the partition.
var keptFiles = []string{"partition.metadata", "leader-epoch-checkpoint"}

func copyKeptFiles(fromDir, toDir string) error {
	for _, name := range keptFiles {
		b, err := os.ReadFile(filepath.Join(fromDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := writeFileSync(filepath.Join(toDir, name), b); err != nil {
			return err
		}
	}
	return nil
}

// fingerprint identifies the input: its partitions with their offsets, and for segments each
// .log file with its size and modification time.
func fingerprint(in *input.Input, parts []int32) ([]string, error) {
	var out []string
	for _, p := range parts {
		first, next, err := in.Offsets(p)
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("partition %d offsets %d..%d", p, first, next))
		if in.Segments != nil {
			for _, f := range in.Segments.Files(p) {
				st, err := os.Stat(f)
				if err != nil {
					return nil, err
				}
				out = append(out, fmt.Sprintf("%s %d %d", filepath.Base(f), st.Size(), st.ModTime().UnixNano()))
			}
		}
	}
	return out, nil
}

// Run runs the job. In strict mode a damaged input stops it with the *eventlog.Problem and
// nothing is published; a failed proof stops it the same way.
func (j *Job) Run(ctx context.Context) (*Result, error) {
	if err := j.check(); err != nil {
		return nil, err
	}
	if j.InPlace {
		if done, err := j.recoverInPlace(); err != nil {
			return nil, err
		} else if done {
			j.logf("finished an interrupted swap of %s", j.Input)
		}
	}
	in, err := input.Open(j.Input, j.Mode)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	parts, err := in.Partitions()
	if err != nil {
		return nil, err
	}
	res := &Result{Partitions: parts, Stats: map[int32]Stats{}}
	if in.Segments != nil {
		res.Report = in.Segments.Report()
	}
	fp, err := fingerprint(in, parts)
	if err != nil {
		return nil, err
	}
	if !j.DryRun && !j.InPlace {
		if done, err := j.alreadyDone(fp); err != nil || done {
			res.Already, res.Published = done, j.Output
			return res, err
		}
	}
	if j.DryRun {
		return res, j.dryRun(ctx, in, res)
	}
	return res, j.compactProveAndPublish(ctx, in, fp, res)
}

// check validates the job's settings.
func (j *Job) check() error {
	if err := j.Options.check(); err != nil {
		return err
	}
	if !j.DryRun && j.Verify == nil {
		return errors.New("compact: a job needs a Verify function (the replay proof)")
	}
	if !j.DryRun && j.InPlace == (j.Output != "") {
		return errors.New("compact: give exactly one of an output path and in-place")
	}
	return nil
}

// dryRun counts what compaction would remove from each partition, writing nothing.
func (j *Job) dryRun(ctx context.Context, in *input.Input, res *Result) error {
	for _, p := range res.Partitions {
		st, err := j.compactPartition(ctx, in, p, func(c *Compacted) (Stats, error) { return Each(ctx, c, p, nil) })
		if err != nil {
			return err
		}
		res.Stats[p] = st
		res.Total.Add(st)
	}
	return nil
}

// compactProveAndPublish writes the compacted log to a staging directory next to where the
// result goes (so that the final rename stays on one filesystem), proves it, and publishes
// it. Until it is published, the staging directory is removed on every return.
func (j *Job) compactProveAndPublish(ctx context.Context, in *input.Input, fp []string, res *Result) error {
	final := j.Output
	if j.InPlace {
		final = j.Input
	}
	staged := filepath.Clean(final) + ".compact-new"
	if err := os.RemoveAll(staged); err != nil { // an abandoned, unverified attempt
		return err
	}
	published := false
	defer func() {
		if !published {
			os.RemoveAll(staged)
		}
	}()
	var out *pebblelog.Log
	if in.DB != nil {
		var err error
		if out, err = pebblelog.Open(staged, nil); err != nil {
			return err
		}
		defer func() {
			if out != nil {
				out.Close()
			}
		}()
	} else if err := os.MkdirAll(staged, 0o755); err != nil {
		return err
	}
	if err := j.writeStaged(ctx, in, staged, out, res); err != nil {
		return err
	}
	var stagedSrc eventlog.Source
	if out != nil {
		stagedSrc = out
	} else {
		r, err := segment.Open(staged, segment.Options{})
		if err != nil {
			return fmt.Errorf("re-read compacted segments: %w", err)
		}
		stagedSrc = r
	}
	j.logf("verifying: replaying the original and the compacted log")
	vstart := time.Now()
	if err := j.Verify(ctx, in, stagedSrc, res.Partitions); err != nil {
		return fmt.Errorf("proof failed, nothing replaced: %w", err)
	}
	j.logf("proof passed (%s)", time.Since(vstart).Round(time.Millisecond))
	if out != nil {
		if err := out.Close(); err != nil {
			return err
		}
		out = nil
	}
	man := Manifest{Input: j.Input, Fingerprint: fp, Now: j.Options.Now, DeleteRetention: j.Options.DeleteRetention, Stats: res.Total}
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := writeFileSync(filepath.Join(staged, ManifestName), b); err != nil {
		return err
	}
	if err := syncDir(staged); err != nil {
		return err
	}
	in.Close()
	var err error
	published, err = j.publish(in, staged, res)
	return err
}

// writeStaged compacts every partition of in into staged: into out when the input is a
// database, else as segment files (with the partition files that stay valid).
func (j *Job) writeStaged(ctx context.Context, in *input.Input, staged string, out *pebblelog.Log, res *Result) error {
	for _, p := range res.Partitions {
		st, err := j.compactPartition(ctx, in, p, func(c *Compacted) (Stats, error) {
			if out != nil {
				return WritePebble(ctx, c, p, out)
			}
			so := SegmentOptions{SegmentBytes: j.SegmentBytes}
			if files := in.Segments.Files(p); len(files) > 0 {
				_, err := fmt.Sscanf(filepath.Base(files[0]), "%d.log", &so.LogStart)
				so.LogStartSet = err == nil
			}
			st, err := WriteSegments(ctx, c, p, staged, so)
			if err != nil {
				return st, err
			}
			from := filepath.Join(j.Input, PartitionDir(p))
			if in.Kind == input.PartitionDir {
				from = j.Input
			}
			return st, copyKeptFiles(from, filepath.Join(staged, PartitionDir(p)))
		})
		if err != nil {
			return err
		}
		res.Stats[p] = st
		res.Total.Add(st)
	}
	return nil
}

// publish puts the proven, synced staging directory in place: renamed to the output path, or
// swapped with the input (a database or partition directory at once, a log directory one
// partition at a time). published says the staging directory is no longer the caller's to
// remove.
func (j *Job) publish(in *input.Input, staged string, res *Result) (published bool, err error) {
	if !j.InPlace {
		if err := os.Rename(staged, j.Output); err != nil {
			return false, err
		}
		res.Published = j.Output
		return true, syncDir(filepath.Dir(filepath.Clean(j.Output)))
	}
	if in.DB != nil || in.Kind == input.PartitionDir {
		src := staged
		if in.Kind == input.PartitionDir {
			src = filepath.Join(staged, PartitionDir(res.Partitions[0]))
		}
		if err := Replace(j.Input, src, j.KeepBackup); err != nil {
			return false, err
		}
	} else {
		// A log directory: each __consumer_offsets-N directory is swapped on its own.
		for _, p := range res.Partitions {
			if err := Replace(filepath.Join(j.Input, PartitionDir(p)), filepath.Join(staged, PartitionDir(p)), j.KeepBackup); err != nil {
				return false, err
			}
		}
	}
	// The staged root now holds only the manifest (segments) or nothing.
	if in.DB == nil {
		os.RemoveAll(staged)
	}
	res.Published = j.Input
	return true, nil
}

// recoverInPlace completes interrupted swaps of the input (the Pebble log or partition
// directory itself, or each partition directory of a log directory).
func (j *Job) recoverInPlace() (bool, error) {
	targets := []string{j.Input}
	ents, _ := os.ReadDir(j.Input)
	for _, e := range ents {
		if m := offsetsDirRE.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			targets = append(targets, filepath.Join(j.Input, e.Name()))
		}
	}
	// A partition directory moved aside by the fallback swap has no entry left: look for
	// markers too.
	marks, _ := filepath.Glob(filepath.Join(j.Input, "*.compact-swap"))
	for _, m := range marks {
		targets = append(targets, m[:len(m)-len(".compact-swap")])
	}
	sort.Strings(targets)
	any := false
	for i, t := range targets {
		if i > 0 && t == targets[i-1] {
			continue
		}
		done, err := Recover(t)
		if err != nil {
			return any, err
		}
		any = any || done
	}
	return any, nil
}

var offsetsDirRE = regexp.MustCompile(`^__consumer_offsets-\d+$`)

// alreadyDone reports whether Output holds the result of this very job (same input
// fingerprint and options); an Output that exists otherwise is an error, never overwritten.
func (j *Job) alreadyDone(fp []string) (bool, error) {
	if _, err := os.Stat(j.Output); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	b, err := os.ReadFile(filepath.Join(j.Output, ManifestName))
	if err != nil {
		return false, fmt.Errorf("%s exists and is not a compacted log of this input: refusing to overwrite it", j.Output)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(j.Output, ManifestName), err)
	}
	same := m.Now.Equal(j.Options.Now) && m.DeleteRetention == j.Options.DeleteRetention && len(m.Fingerprint) == len(fp)
	for i := 0; same && i < len(fp); i++ {
		same = fp[i] == m.Fingerprint[i]
	}
	if !same {
		return false, fmt.Errorf("%s holds a compaction of another input or with other options: refusing to overwrite it", j.Output)
	}
	j.logf("%s already holds this compaction: nothing to do", j.Output)
	return true, nil
}

// compactPartition plans partition p and runs fn over the compacted view.
func (j *Job) compactPartition(ctx context.Context, in *input.Input, p int32, fn func(*Compacted) (Stats, error)) (Stats, error) {
	opts := j.Options
	if opts.Progress == nil && j.Log != nil {
		phase, start := "", time.Now()
		opts.Progress = func(pr Progress) {
			if pr.Phase != phase {
				phase, start = pr.Phase, time.Now()
			}
			mb := float64(pr.Bytes) / (1 << 20)
			line := fmt.Sprintf("partition %d: %s: %.0f MiB read", pr.Partition, pr.Phase, mb)
			if pr.Total > 0 {
				line += fmt.Sprintf(" of %.0f", float64(pr.Total)/(1<<20))
			}
			j.logf("%s (%.0f MiB/s)", line, mb/max(time.Since(start).Seconds(), 1e-3))
		}
	}
	start := time.Now()
	plan, err := NewPlan(ctx, in, p, opts)
	if err != nil {
		return Stats{}, fmt.Errorf("partition %d: %w", p, err)
	}
	defer plan.Close()
	j.logf("partition %d: %d distinct keys, stable end %d of %d (index %s, spilled %v)", p, plan.Keys, plan.StableEnd, plan.End, time.Since(start).Round(time.Millisecond), plan.Spilled())
	start = time.Now()
	st, err := fn(NewCompacted(in, plan))
	if err != nil {
		return st, fmt.Errorf("partition %d: %w", p, err)
	}
	j.logf("partition %d: %d of %d records kept (write %s)", p, st.OutRecords, st.InRecords, time.Since(start).Round(time.Millisecond))
	return st, nil
}
