package audit

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/segment"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/internal/testcorpus"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/explain"
)

// truth is what the diagnoses scenario's driver made happen (steps.json).
type truth struct {
	Group    string  `json:"group"`
	Subject  string  `json:"subject"` // member, offsets, group, commit
	ClientID *string `json:"clientId"`
	Cause    string  `json:"cause"`
}

// truthCauses maps the driver's causes to the diagnoses' names where they differ.
var truthCauses = map[string]string{"group-expiry": "cleanup", "admin-reset": "admin-tool"}

// TestDiagnosesAgainstGroundTruth checks every cause coordlog states for what the driver of
// the diagnoses recordings (Kafka 4.4 and 4.2 brokers) made happen: a cause stated as proved
// must be the true one; a likely or one-of-several cause that is not must offer the true one
// among its alternatives. It reports how many answers are proved, likely and one of several,
// with the session timeouts the scenario sets given (3 s, its shortest) and assumed (Kafka's
// 45 s default). COORDLOG_RECORDINGS names fresh recordings to check instead (CI's).
func TestDiagnosesAgainstGroundTruth(t *testing.T) {
	for _, rec := range []struct {
		dir     string
		version groupstate.KafkaVersion
	}{{"diagnoses", groupstate.Kafka44}, {"diagnoses-4.2", groupstate.Kafka42}} {
		for _, session := range []int64{3000, 0} {
			name := rec.dir + "/session-given"
			if session == 0 {
				name = rec.dir + "/session-assumed"
			}
			t.Run(name, func(t *testing.T) {
				root := testcorpus.Recordings()
				if d := os.Getenv("COORDLOG_RECORDINGS"); d != "" {
					root = d // a fresh recording (fixtures/kafka/ci-live.sh)
				}
				dir := filepath.Join(root, rec.dir)
				truths := readTruths(t, dir)
				events := explainAll(t, dir, rec.version, session)
				tally := map[string]int{}
				for _, tr := range truths {
					e := matchTruth(events, tr)
					require.NotNil(t, e, "no event for the driver's %+v", tr)
					cause, alts := stated(e)
					want := tr.Cause
					if c, ok := truthCauses[want]; ok {
						want = c
					}
					require.NotEmpty(t, e.Certainty, "%s: %s states no certainty", tr.Group, e.Text)
					right := cause == want
					if e.Certainty == explain.CertaintyProved {
						require.True(t, right, "%s: proved %s, but the driver made %s happen: %s", tr.Group, cause, want, e.Text)
					} else if !right {
						require.Contains(t, alts, want, "%s: %s %s, and the true cause %s is not among the alternatives: %s",
							tr.Group, e.Certainty, cause, want, e.Text)
					}
					key := string(e.Certainty)
					if !right {
						key += ", the true cause an alternative"
						t.Logf("%s %s: told %s (%s), truly %s", tr.Group, tr.Subject, cause, e.Certainty, want)
					}
					tally[key]++
				}
				t.Logf("%d ground truths: %v", len(truths), tally)
			})
		}
	}
}

func readTruths(t *testing.T, dir string) []truth {
	b, err := os.ReadFile(filepath.Join(dir, "steps.json"))
	if os.IsNotExist(err) {
		t.Skipf("%s is not here", dir)
	}
	require.NoError(t, err)
	var steps []struct {
		Truth []truth `json:"truth"`
	}
	require.NoError(t, json.Unmarshal(b, &steps))
	var out []truth
	for _, s := range steps {
		out = append(out, s.Truth...)
	}
	require.NotEmpty(t, out, "steps.json has no ground truth")
	return out
}

// explainAll is every event of every group of the recording, from one analysis of the whole
// partition (as check's, which reads every group), not marked-only.
func explainAll(t *testing.T, dir string, v groupstate.KafkaVersion, sessionMs int64) []*explain.Event {
	src, err := segment.Open(filepath.Join(dir, "__consumer_offsets-0"), segment.Options{})
	require.NoError(t, err)
	var events []*explain.Event
	an := explain.NewAnalyzer(0, explain.Options{SessionTimeoutMs: sessionMs, Emit: func(e *explain.Event) { events = append(events, e) }})
	e := replay.New(0, replay.Options{Version: v, Mode: eventlog.Strict, Observer: an})
	require.NoError(t, e.Run(context.Background(), src, math.MaxInt64))
	an.Close()
	return events
}

// matchTruth finds the event that tells what tr says happened.
func matchTruth(events []*explain.Event, tr truth) *explain.Event {
	for _, e := range events {
		if e.Group != tr.Group {
			continue
		}
		switch tr.Subject {
		case "member":
			if tr.Cause == "replaced" {
				// (A classic group's record of the replacement keeps the old member's client
				// id: Kafka's ClassicGroup.replaceStaticMember.)
				if e.Kind == explain.KindMemberReplaced {
					return e
				}
				continue
			}
			if e.Removal != nil && e.Removal.Member.ClientID == *tr.ClientID {
				return e
			}
		case "offsets":
			if e.Deletion != nil && len(e.Deletion.Offsets) > 0 {
				return e
			}
		case "group":
			if e.Deletion != nil && len(e.Deletion.Offsets) == 0 {
				return e
			}
		case "commit":
			if e.Kind == explain.KindOffsetsCommitted && e.HasMark(explain.MarkWhileEmpty) {
				return e
			}
		}
	}
	return nil
}

// stated is the cause an event states and the alternatives it offers.
func stated(e *explain.Event) (string, []string) {
	var alts []string
	for _, a := range e.Alternatives {
		alts = append(alts, a.Cause)
	}
	switch {
	case e.Kind == explain.KindMemberReplaced:
		return "replaced", alts
	case e.Removal != nil:
		return e.Removal.Cause, alts
	case e.Deletion != nil:
		return e.Deletion.Cause, alts
	case e.Offsets != nil && len(alts) > 0:
		// Written while empty: the first alternative is what the text names first.
		return alts[0], alts[1:]
	}
	return "", alts
}
