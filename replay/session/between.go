package session

import (
	"context"
	"fmt"

	"github.com/coordlog/coordlog/eventlog"
	"github.com/coordlog/coordlog/replay"
	"github.com/coordlog/coordlog/replay/query"
)

// Between replays each partition of one log once, up to its first position, where its
// state is captured, and on to its second: the two sides of a diff of two points of one log
// (first[i] and second[i] are the same partition's; query.AtStart gives the start of the
// log). passed is called for each partition at each point (atFirst tells which), once the
// engine is there. A first position after the second is a *RequestError; a replay that stops
// a *ReplayError.
func Between(ctx context.Context, src eventlog.Source, first, second []query.Position, opts replay.Options, passed func(e *replay.Engine, atFirst bool)) (a, b query.Side, err error) {
	for i := range first {
		p := first[i].Partition
		if first[i].Until > second[i].Until {
			return nil, nil, &RequestError{fmt.Errorf("partition %d: the first point (%s) is after the second (%s): swap them", p, first[i].Label(), second[i].Label())}
		}
		e := replay.New(p, opts)
		for _, at := range []struct {
			pos  *query.Position
			side *query.Side
		}{{&first[i], &a}, {&second[i], &b}} {
			if err := e.Run(ctx, src, at.pos.Until); err != nil {
				return nil, nil, &ReplayError{Err: err}
			}
			*at.side = append(*at.side, query.Capture([]query.PartitionState{{Partition: p, View: e.State()}})...)
			passed(e, at.pos == &first[i])
		}
	}
	return a, b, nil
}
