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
	"time"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/eventlog/lock"
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
	Mode eventlog.Mode
	// KeepAllProblems keeps every problem of the input's report in full (a verbose listing);
	// otherwise they are counted per file and kind past the first thousand.
	KeepAllProblems bool
	SegmentBytes    int64
	DryRun          bool
	Verify          VerifyFunc
	KeepBackup      bool
	// Snapshot, for a database, writes snapshots of the compacted log into it before it is
	// published (the original's snapshots are not carried over: see SnapshotFunc). nil: the
	// compacted database has none.
	Snapshot SnapshotFunc
	// Command is what the job's lock files say holds them (default "compact --in-place" or
	// "compact --out").
	Command string
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
}

// SnapshotFunc writes snapshots of a compacted database, staged (not yet published; its log
// is compacted, open), for the partitions parts of original, the database it was compacted
// from. It returns how many snapshot files original holds and a line for each snapshot
// written (printed after "snapshots: "). It lives outside this package for the reason VerifyFunc does.
//
// A snapshot of the original at offset N plus the compacted log after N is not in general
// the compacted log's state (a tombstone after N that the cleaner removed leaves the key it
// deleted alive in the snapshot), so the original's snapshots are never copied.
type SnapshotFunc func(ctx context.Context, original, staged string, compacted eventlog.Source, parts []int32) (originals int, written []string, err error)

// Result is what a job did.
type Result struct {
	Partitions []int32
	Stats      map[int32]Stats
	Total      Stats
	Report     *eventlog.Report // segment inputs: warnings and (forensic) problems
	Published  string           // where the compacted log is now ("" for a dry run)
	Already    bool             // Output already held this job's result: nothing done
	// Snapshots says, for a database, what became of the original's snapshots and which
	// snapshots the compacted log has (lines to print after "snapshots: ").
	Snapshots []string
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
// nothing is published; a failed proof stops it the same way. Except for a dry run, it first
// takes the locks of everything it writes (lock.BusyError when another writer holds one).
func (j *Job) Run(ctx context.Context) (*Result, error) {
	if err := j.check(); err != nil {
		return nil, err
	}
	var r *jobRun
	if !j.DryRun {
		var err error
		r, err = j.start()
		defer r.release()
		if err != nil {
			return nil, err
		}
	}
	in, err := input.OpenWith(j.Input, input.Options{Mode: j.Mode, KeepAllProblems: j.KeepAllProblems})
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
	if j.DryRun {
		return res, j.dryRun(ctx, in, res)
	}
	fp, err := fingerprint(in, parts)
	if err != nil {
		return nil, err
	}
	if !j.InPlace {
		if done, err := j.alreadyDone(fp); err != nil || done {
			res.Already, res.Published = done, j.Output
			return res, err
		}
	}
	return res, r.compactProveAndPublish(ctx, in, fp, res)
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

// compactProveAndPublish writes the compacted log to a staging directory of its own next to
// where the result goes (so that the final rename stays on one filesystem), proves it, and
// publishes it. Until it is published, the staging directory is removed on every return.
func (r *jobRun) compactProveAndPublish(ctx context.Context, in *input.Input, fp []string, res *Result) error {
	j := r.Job
	staged, err := stagingDir(r.final)
	if err != nil {
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
		if err := r.snapshots(ctx, staged, out, res); err != nil {
			return err
		}
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
	published, err = r.publish(in, staged, res)
	return err
}

// snapshots has the compacted database staged get snapshots of its own (Job.Snapshot) and
// says what became of the original's.
func (r *jobRun) snapshots(ctx context.Context, staged string, out *pebblelog.Log, res *Result) error {
	j := r.Job
	if j.Snapshot == nil {
		return nil
	}
	originals, written, err := j.Snapshot(ctx, r.input, staged, out, res.Partitions)
	if err != nil {
		return fmt.Errorf("snapshot the compacted log: %w", err)
	}
	if originals > 0 {
		fate := "they stay with the original in " + j.Input
		if j.InPlace && j.KeepBackup {
			fate = "they stay in the backup " + BackupPath(r.final)
		} else if j.InPlace {
			fate = "they are removed with it (--keep-backup keeps them)"
		}
		res.Snapshots = append(res.Snapshots, fmt.Sprintf("%d of the original log, not valid for the compacted log", originals), fate)
	}
	res.Snapshots = append(res.Snapshots, written...)
	for _, line := range res.Snapshots {
		j.logf("snapshots: %s", line)
	}
	return nil
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
func (r *jobRun) publish(in *input.Input, staged string, res *Result) (published bool, err error) {
	j := r.Job
	if !j.InPlace {
		if err := renameNoReplace(staged, r.final); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return false, fmt.Errorf("%s appeared while the compaction ran: refusing to overwrite it", j.Output)
			}
			return false, err
		}
		res.Published = j.Output
		return true, syncDir(filepath.Dir(r.final))
	}
	type swap struct{ target, staged string }
	var swaps []swap
	switch {
	case in.DB != nil:
		swaps = []swap{{r.final, staged}}
	case in.Kind == input.PartitionDir:
		swaps = []swap{{r.final, filepath.Join(staged, PartitionDir(res.Partitions[0]))}}
	default:
		// A log directory: each __consumer_offsets-N directory is swapped on its own, where
		// it really is.
		for _, p := range res.Partitions {
			target, err := lock.Resolve(filepath.Join(r.final, PartitionDir(p)))
			if err != nil {
				return false, err
			}
			swaps = append(swaps, swap{target, filepath.Join(staged, PartitionDir(p))})
		}
	}
	for _, s := range swaps { // before the first swap: all or none
		if err := sameFileSystem(s.target, s.staged); err != nil {
			return false, err
		}
	}
	for _, s := range swaps {
		committed, err := replace(s.target, s.staged, j.KeepBackup, r.beforeSwap)
		published = published || committed
		if err != nil && committed {
			// A swap that wrote its marker is the next run's to complete (Recover), and
			// the staged directory with it.
			return true, fmt.Errorf("%w (the compacted log is proven: run the compaction again to finish the swap)", err)
		}
		if err != nil {
			return published, err
		}
	}
	// The staged root now holds only the manifest (segments) or nothing.
	if in.DB == nil {
		os.RemoveAll(staged)
	}
	res.Published = j.Input
	return true, nil
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
