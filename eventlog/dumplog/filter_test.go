package dumplog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/eventlog/dumplog"
	"github.com/coordlog/coordlog/eventlog/input"
	"github.com/coordlog/coordlog/recordcodec"
)

type line struct {
	Offset int64 `json:"offset"`
	Batch  struct {
		ProducerID int64 `json:"producerId"`
		Control    bool  `json:"control"`
	} `json:"batch"`
	Key *struct {
		Type int `json:"type"`
		Data struct {
			GroupID string `json:"groupId"`
			Group   string `json:"group"` // offset commits' keys
		} `json:"data"`
	} `json:"key"`
}

func (l line) group() string {
	if l.Key == nil {
		return ""
	}
	return l.Key.Data.GroupID + l.Key.Data.Group
}

// dump prints the transactions recording (Kafka 4.4: committed, aborted and open
// transactions of three groups) as JSON lines through f.
func dump(t *testing.T, f dumplog.Filter, seen *dumplog.GroupsSeen) []line {
	t.Helper()
	in, err := input.Open("../../fixtures/real/transactions/__consumer_offsets-0", eventlog.Strict)
	require.NoError(t, err)
	defer in.Close()
	var b bytes.Buffer
	require.NoError(t, dumplog.Dump(context.Background(), in, 0, f, recordcodec.Decoder{}, &dumplog.JSONLPrinter{W: &b}, seen))
	var out []line
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var x line
		require.NoError(t, json.Unmarshal([]byte(l), &x))
		out = append(out, x)
	}
	return out
}

// TestFilter: a group keeps its records and the markers of the producers that wrote them,
// nothing else; types keep records of those types (control: the markers); offsets bound
// every record; what the records name besides the group is seen.
func TestFilter(t *testing.T) {
	all := dump(t, dumplog.Filter{To: math.MaxInt64}, nil)
	require.Len(t, all, 27)

	seen := &dumplog.GroupsSeen{}
	group := dump(t, dumplog.Filter{To: math.MaxInt64, Group: "txn-simple"}, seen)
	producers := map[int64]bool{}
	want := 0
	for _, l := range all {
		switch {
		case l.Batch.Control && producers[l.Batch.ProducerID]:
			want++
		case l.group() == "txn-simple":
			want++
			producers[l.Batch.ProducerID] = l.Batch.ProducerID >= 0
		}
	}
	require.Len(t, group, want)
	markers := 0
	for _, l := range group {
		if l.Batch.Control {
			markers++
			continue
		}
		require.Equal(t, "txn-simple", l.group())
	}
	require.Positive(t, markers, "the group's transactions end in markers")
	require.True(t, seen.Matched)
	require.True(t, seen.Others["txn-consumer"] && !seen.Others["txn-simple"])

	var types dumplog.Filter
	require.NoError(t, types.ParseTypes([]string{"OffsetCommit", " control"}))
	types.To = math.MaxInt64
	for _, l := range dump(t, types, nil) {
		require.True(t, l.Batch.Control || l.Key.Type == int(recordcodec.OffsetCommit), "offset %d", l.Offset)
	}
	require.ErrorContains(t, types.ParseTypes([]string{"NoSuchRecord"}), `--type "NoSuchRecord" is not a record type id, name or 'control'`)

	window := dump(t, dumplog.Filter{From: 10, To: 12}, nil)
	require.Equal(t, []int64{10, 11, 12}, []int64{window[0].Offset, window[1].Offset, window[2].Offset})
	require.Len(t, window, 3)
}
