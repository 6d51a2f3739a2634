package coordinator

import (
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/recordcodec"
)

// ScenarioRunner is the core every coordinator's scenario runner shares (consumertest's and
// streamstest's Runner embed it; a classic coordinator's would too): the log it appends the
// decisions to, the clock, the cluster metadata its scripts change, the group its commands
// address, the transcript, and the counts of what it appended. The runners add their
// coordinator, its soft state, the simulated clients and their commands.
type ScenarioRunner struct {
	Log       Log
	Partition int32
	Meta      *Metadata
	Now       int64 // the clock in ms; starts at 1000
	Group     string
	Out       io.Writer // the transcript; nil writes none
	Batches   int       // batches appended
	Records   int       // records appended
}

// NewScenarioRunner returns the core of a runner that appends to log, addresses group and
// writes its transcript to out (nil: none); the cluster has no topics yet.
func NewScenarioRunner(log Log, out io.Writer, group string) ScenarioRunner {
	return ScenarioRunner{Log: log, Meta: &Metadata{Topics: map[string]TopicMetadata{}}, Now: 1000, Group: group, Out: out}
}

// Printf writes to the transcript.
func (r *ScenarioRunner) Printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// RunScript executes a whole script through exec (see RunScript), each command echoed to the
// transcript as a "> " line.
func (r *ScenarioRunner) RunScript(script io.Reader, exec func(cmd string) error) error {
	return RunScript(script, func(cmd string) { r.Printf("> %s\n", cmd) }, exec)
}

// Append appends one decision's records to the log as one batch at the clock's time, prints
// them and counts them (AppendDecision); no records, no batch.
func (r *ScenarioRunner) Append(recs []recordcodec.Record) error {
	n, err := AppendDecision(r.Log, r.Partition, r.Now, recs, r.Out)
	if n > 0 {
		r.Batches++
		r.Records += n
	}
	return err
}

// PrintError prints an error answer: `  < error=CODE "MESSAGE"`.
func (r *ScenarioRunner) PrintError(code int16, message *string) {
	msg := ""
	if message != nil {
		msg = *message
	}
	r.Printf("  < error=%d %q\n", code, msg)
}

// FireTimers fires every timer due at the clock, one batch each, until none is left: tick is
// the coordinator's Tick at now. A timer whose write failed prints its error and appends
// nothing.
func (r *ScenarioRunner) FireTimers(tick func(now int64) (TimerResult, bool)) error {
	for {
		res, ok := tick(r.Now)
		if !ok {
			return nil
		}
		r.Printf("  timer %s %s %s\n", res.Kind, res.Group, res.Member)
		if res.Err != nil {
			r.PrintError(res.Err.Code, &res.Err.Message)
			continue
		}
		if err := r.Append(res.Records); err != nil {
			return err
		}
	}
}

// PollRounds runs rounds in which every client (clients yields their ids; read again at the
// start of each round) takes one step of its poll loop (poll reports whether the step changed
// anything: records written, a new assignment), in sorted order, until a round changes
// nothing; it returns the number of rounds.
func (r *ScenarioRunner) PollRounds(maxRounds int, clients iter.Seq[string], poll func(id string) (bool, error)) (int, error) {
	for round := 1; round <= maxRounds; round++ {
		changed := false
		for _, id := range slices.Sorted(clients) {
			moved, err := poll(id)
			if err != nil {
				return round, err
			}
			changed = changed || moved
		}
		if !changed {
			return round, nil
		}
	}
	return maxRounds, fmt.Errorf("no convergence after %d rounds", maxRounds)
}

// PollCommand is the command a joined client's poll step sends, printed as its "> " line: a
// heartbeat, or a join once it lost its epoch (epoch 0).
func (r *ScenarioRunner) PollCommand(id string, epoch int32) string {
	cmd := "hb"
	if epoch == 0 {
		cmd = "join"
	}
	r.Printf("> %s %s\n", cmd, id)
	return cmd
}

// SetClock is the command `clock +MS` (advance the clock) or `clock =MS` (set it).
func (r *ScenarioRunner) SetClock(arg string) error {
	n, err := strconv.ParseInt(arg[min(1, len(arg)):], 10, 64)
	switch {
	case err != nil || !strings.HasPrefix(arg, "+") && !strings.HasPrefix(arg, "="):
		return fmt.Errorf("clock: want +MS or =MS, got %q", arg)
	case arg[0] == '+':
		r.Now += n
	default:
		r.Now = n
	}
	return nil
}

// SetTopic creates or resizes a topic of the cluster, DeleteTopic deletes one; both bump the
// metadata version, as a metadata image that changes a topic would.
func (r *ScenarioRunner) SetTopic(name string, id [16]byte, partitions int32) {
	r.Meta.Topics[name] = TopicMetadata{ID: id, Partitions: partitions}
	r.Meta.Version++
}

// DeleteTopic deletes a topic of the cluster (see SetTopic).
func (r *ScenarioRunner) DeleteTopic(name string) {
	delete(r.Meta.Topics, name)
	r.Meta.Version++
}

// ScenarioTopicID is the id a runner gives a topic it creates by name: the name's bytes,
// padded, with its length last.
func ScenarioTopicID(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	id[15] = byte(len(name))
	return id
}
