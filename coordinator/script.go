package coordinator

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Log is where a scenario runner appends a coordinator's decisions and reads the state it
// decides on. *replay.Engine satisfies it: its Apply replays a batch into the state the next
// decision reads, the same path as a dump. A caller that also keeps the batches (a Pebble
// log, segment files) wraps Apply. Runners call Log from their own goroutine only.
type Log interface {
	// State is the state the coordinator decides on: every applied batch included.
	State() groupstate.View
	// Apply appends one decision (a batch whose base offset is NextOffset) and replays it.
	Apply(*eventlog.Batch) error
	// NextOffset is the offset the next batch starts at.
	NextOffset() int64
}

// RunScript executes a scenario script, one command per line ('#' starts a comment), through
// exec; echo prints each command as a "> " line first. A datadriven test file
// (github.com/cockroachdb/datadriven, the coordinators' testdata) runs as well: its
// directives are the commands, and its expected-output blocks are skipped. Errors name the
// line.
func RunScript(script io.Reader, echo func(cmd string), exec func(cmd string) error) error {
	sc := bufio.NewScanner(script)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	for {
		text, ok := next()
		if !ok {
			break
		}
		if text == "----" {
			if err := skipExpected(next); err != nil {
				return fmt.Errorf("line %d: %w", line, err)
			}
			continue
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		echo(text)
		if err := exec(text); err != nil {
			return fmt.Errorf("line %d: %s: %w", line, text, err)
		}
	}
	return sc.Err()
}

// skipExpected skips a datadriven expected-output block whose opening "----" line was just
// read, where datadriven's reader ends it: at the first blank line or the end of the file;
// when a second "----" follows at once (the form whose output may hold blank lines), after
// the next two consecutive "----" lines and the blank line that must follow them.
func skipExpected(next func() (string, bool)) error {
	text, ok := next()
	if !ok {
		return nil
	}
	if text != "----" {
		for ok && strings.TrimSpace(text) != "" {
			text, ok = next()
		}
		return nil
	}
	for {
		if text, ok = next(); !ok {
			return nil
		}
		if text != "----" {
			continue
		}
		if text, ok = next(); !ok {
			return nil
		}
		if text == "----" {
			if text, ok = next(); ok && text != "" {
				return fmt.Errorf("non-blank line after the closing ----/---- of an expected-output block")
			}
			return nil
		}
	}
}

// ScriptArgs splits a command's fields into key=value arguments and positional ones. A value
// in double quotes is unquoted (Go syntax), so that it may start with "(", which datadriven
// would read as a list.
func ScriptArgs(fields []string) (map[string]string, []string) {
	kv := map[string]string{}
	var pos []string
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			if len(v) >= 2 && v[0] == '"' {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
			}
			kv[k] = v
		} else {
			pos = append(pos, f)
		}
	}
	return kv, pos
}

// AppendDecision appends one decision's records to log as one batch at its next offset with
// timestamp now, and prints each record ("  + key value", dump-log JSON) to out when out is not
// nil. It returns the number of records appended (0 for none: no batch).
func AppendDecision(log Log, partition int32, now int64, recs []recordcodec.Record, out io.Writer) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	b, err := NewBatch(partition, log.NextOffset(), now, recs)
	if err != nil {
		return 0, err
	}
	if out != nil {
		var line []byte
		for _, rec := range recs {
			line = append(line[:0], "  + "...)
			line = recordcodec.AppendDumpLogKey(line, rec.Key)
			line = append(line, ' ')
			line = recordcodec.AppendDumpLogPayload(line, rec.Value)
			line = append(line, '\n')
			if _, err := out.Write(line); err != nil {
				return 0, err
			}
		}
	}
	return len(recs), log.Apply(b)
}
