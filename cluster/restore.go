package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coordlog/coordlog/groupstate"
)

// Actions of a restore row.
const (
	// ActionCommit: the restored offset differs from the live one (or there is none) and will
	// be committed.
	ActionCommit = "commit"
	// ActionUnchanged: the live offset already equals the restored one (offset and metadata).
	ActionUnchanged = "unchanged"
	// ActionMissingTopic: the topic is not on the cluster; Kafka would refuse the commit.
	ActionMissingTopic = "missing-topic"
	// ActionOutOfRange: the restored offset lies outside the partition's log (below its start
	// after retention, or past its end after the topic was recreated); committed only when
	// the plan allows it.
	ActionOutOfRange = "out-of-range"
	// ActionLiveOnly: the live group has an offset the restore point does not: left as is.
	ActionLiveOnly = "live-only"
)

// RestoreRow is one partition of a restore plan.
type RestoreRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Restored is the offset at the restore point (nil for a live-only row), with its metadata
	// and the log offset of the record that wrote it.
	Restored         *int64 `json:"restoredOffset"`
	RestoredMetadata string `json:"restoredMetadata,omitempty"`
	RecordOffset     int64  `json:"recordOffset,omitempty"`
	// Live is the group's committed offset on the cluster now (nil: none).
	Live         *int64 `json:"liveOffset"`
	LiveMetadata string `json:"liveMetadata,omitempty"`
	// Delta is Restored - Live when both exist.
	Delta *int64 `json:"delta"`
	// LogStart and LogEnd are the partition's log bounds now (nil when the topic is missing or
	// the partition does not exist any more).
	LogStart *int64 `json:"logStartOffset"`
	LogEnd   *int64 `json:"logEndOffset"`
	Action   string `json:"action"`
	Note     string `json:"note,omitempty"`
}

// Plan is what a restore would do: per partition, live against restored, and why it would be
// refused.
type Plan struct {
	Group   string               `json:"group"`
	LogType groupstate.GroupType `json:"typeInLog"`
	Live    LiveGroup            `json:"live"`
	Rows    []RestoreRow         `json:"partitions"`
	// Refusals are the reasons the plan cannot be applied as it stands (active members, a
	// share group, offsets out of range); empty when it can.
	Refusals []string `json:"refusals,omitempty"`
	// Notes are what the user should know but does not stop the restore.
	Notes []string `json:"notes,omitempty"`

	allowOutOfRange bool
}

// Commits returns the rows the plan would commit.
func (p *Plan) Commits() []RestoreRow {
	var out []RestoreRow
	for _, r := range p.Rows {
		if r.Action == ActionCommit || r.Action == ActionOutOfRange && p.allowOutOfRange {
			out = append(out, r)
		}
	}
	return out
}

// PlanOptions configure NewPlan.
type PlanOptions struct {
	// AllowOutOfRange commits offsets outside their partition's current log too (a consumer
	// then resets by its auto.offset.reset).
	AllowOutOfRange bool
}

// NewPlan compares the offsets to restore (one group's committed offsets at the restore point,
// from a replayed state) with the live group, its committed offsets and the topics' logs. It is
// pure: Inspect gathers the live side.
func NewPlan(group string, logType groupstate.GroupType, restore []groupstate.CommittedOffset, live Live, opts PlanOptions) Plan {
	p := Plan{Group: group, LogType: logType, Live: live.Group, allowOutOfRange: opts.AllowOutOfRange}
	seen := map[TopicPartition]bool{}
	outOfRange := 0
	for _, o := range restore {
		tp := TopicPartition{o.Topic, o.Partition}
		seen[tp] = true
		v := o.CommittedOffset
		r := RestoreRow{Topic: o.Topic, Partition: o.Partition, Restored: &v, RestoredMetadata: o.Metadata, RecordOffset: o.RecordOffset}
		if c, ok := live.Committed[tp]; ok {
			lv := c.Offset
			d := v - lv
			r.Live, r.LiveMetadata, r.Delta = &lv, c.Metadata, &d
		}
		if err, missing := live.Logs.Missing[o.Topic]; missing {
			r.Action, r.Note = ActionMissingTopic, fmt.Sprintf("topic %s is not on the cluster (%v)", o.Topic, err)
			p.Rows = append(p.Rows, r)
			continue
		}
		lo, ok := live.Logs.Partitions[tp]
		if !ok {
			r.Action, r.Note = ActionMissingTopic, fmt.Sprintf("topic %s has no partition %d on the cluster", o.Topic, o.Partition)
			p.Rows = append(p.Rows, r)
			continue
		}
		start, end := lo.Start, lo.End
		r.LogStart, r.LogEnd = &start, &end
		switch {
		case v > end:
			r.Action, r.Note = ActionOutOfRange, fmt.Sprintf("past the log end %d (the topic was recreated or truncated?)", end)
			outOfRange++
		case v < start:
			r.Action, r.Note = ActionOutOfRange, fmt.Sprintf("below the log start %d (retention removed those records)", start)
			outOfRange++
		case r.Live != nil && *r.Live == v && r.LiveMetadata == o.Metadata:
			r.Action = ActionUnchanged
		default:
			r.Action = ActionCommit
		}
		p.Rows = append(p.Rows, r)
	}
	for tp, c := range live.Committed {
		if seen[tp] {
			continue
		}
		lv := c.Offset
		p.Rows = append(p.Rows, RestoreRow{Topic: tp.Topic, Partition: tp.Partition, Live: &lv, LiveMetadata: c.Metadata, Action: ActionLiveOnly,
			Note: "no offset at the restore point: left as is"})
	}
	slices.SortFunc(p.Rows, func(a, b RestoreRow) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	g := live.Group
	switch {
	case logType == groupstate.GroupTypeShare || g.Type == "share":
		p.Refusals = append(p.Refusals, "share groups keep their positions in __share_group_state, not in committed offsets: use kafka-share-groups --reset-offsets")
	case !g.Empty():
		p.Refusals = append(p.Refusals, fmt.Sprintf("group %s has %d active member(s) (state %s): Kafka accepts offsets from outside a group only when it is empty; stop its consumers (or use --wait-for-empty)", group, len(g.Members), g.State))
	}
	if outOfRange > 0 && !opts.AllowOutOfRange {
		p.Refusals = append(p.Refusals, fmt.Sprintf("%d offset(s) lie outside their partition's log now: --allow-out-of-range commits them anyway (consumers then reset by auto.offset.reset)", outOfRange))
	}
	if !g.Exists {
		p.Notes = append(p.Notes, fmt.Sprintf("group %s does not exist on the cluster now: committing creates it as a simple classic group, which a %s group's consumers take over when they join", group, logType))
	} else if g.Type != "" && g.Type != string(logType) {
		p.Notes = append(p.Notes, fmt.Sprintf("group %s is a %s group on the cluster and a %s group at the restore point: offsets apply to either", group, g.Type, logType))
	}
	if len(restore) == 0 {
		p.Refusals = append(p.Refusals, fmt.Sprintf("group %s has no committed offset at the restore point", group))
	}
	return p
}

// Live is the cluster's side of a restore: the group, its committed offsets and the logs of
// the topics involved.
type Live struct {
	Group     LiveGroup
	Committed map[TopicPartition]Committed
	Logs      TopicLogs
}

// Inspect reads the live side of a restore of group over the given topics (those of the
// offsets to restore; the live group's own topics are added).
func (c *Client) Inspect(ctx context.Context, group string, topics []string) (Live, error) {
	var l Live
	var err error
	if l.Group, err = c.DescribeGroup(ctx, group); err != nil {
		return l, err
	}
	if l.Committed, err = c.CommittedOffsets(ctx, group); err != nil {
		return l, err
	}
	ts := slices.Clone(topics)
	for tp := range l.Committed {
		ts = append(ts, tp.Topic)
	}
	slices.Sort(ts)
	if l.Logs, err = c.LogOffsets(ctx, slices.Compact(ts)); err != nil {
		return l, err
	}
	return l, nil
}

// WaitForEmpty polls the group every interval until it has no member, or ctx ends.
func (c *Client) WaitForEmpty(ctx context.Context, group string, interval time.Duration) (LiveGroup, error) {
	for {
		g, err := c.DescribeGroup(ctx, group)
		if err != nil || g.Empty() {
			return g, err
		}
		select {
		case <-ctx.Done():
			return g, fmt.Errorf("group %s still has %d member(s): %w", group, len(g.Members), ctx.Err())
		case <-time.After(interval):
		}
	}
}

// Applied is what a restore did: the offsets committed, the ones Kafka refused, and the
// read-back of every committed partition.
type Applied struct {
	Committed int                       `json:"committed"`
	Failed    map[TopicPartition]string `json:"-"`
	Verified  []Verification            `json:"verification"`
}

// OK reports whether every commit succeeded and reads back as restored.
func (a *Applied) OK() bool {
	if len(a.Failed) > 0 {
		return false
	}
	for _, v := range a.Verified {
		if !v.OK {
			return false
		}
	}
	return true
}

// Verification is the read-back of one restored partition.
type Verification struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Want      int64  `json:"want"`
	Got       *int64 `json:"got"` // nil: no committed offset read back
	OK        bool   `json:"ok"`
}

// Apply commits the plan's offsets (refusing a plan with refusals), then reads the group's
// committed offsets back and checks each against what was restored. The leader epoch is left
// out (-1), as Kafka's reset tool does: the restored offset may be of an older epoch.
func (c *Client) Apply(ctx context.Context, p *Plan) (Applied, error) {
	if len(p.Refusals) > 0 {
		return Applied{}, fmt.Errorf("restore of %s refused: %s", p.Group, strings.Join(p.Refusals, "; "))
	}
	rows := p.Commits()
	offs := map[TopicPartition]Committed{}
	for _, r := range rows {
		offs[TopicPartition{r.Topic, r.Partition}] = Committed{Offset: *r.Restored, LeaderEpoch: -1, Metadata: r.RestoredMetadata}
	}
	var a Applied
	if len(offs) > 0 {
		failed, err := c.Commit(ctx, p.Group, offs)
		if err != nil {
			return a, err
		}
		a.Failed = map[TopicPartition]string{}
		for tp, e := range failed {
			a.Failed[tp] = e.Error()
		}
		a.Committed = len(offs) - len(failed)
	}
	back, err := c.CommittedOffsets(ctx, p.Group)
	if err != nil {
		return a, fmt.Errorf("read back: %w", err)
	}
	for _, r := range rows {
		tp := TopicPartition{r.Topic, r.Partition}
		v := Verification{Topic: r.Topic, Partition: r.Partition, Want: *r.Restored}
		if got, ok := back[tp]; ok {
			g := got.Offset
			v.Got, v.OK = &g, g == *r.Restored && got.Metadata == r.RestoredMetadata
		}
		a.Verified = append(a.Verified, v)
	}
	return a, nil
}
