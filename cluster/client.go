package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client asks a live cluster what coordlog needs beyond the __consumer_offsets records: a
// group's live state and members, committed offsets, the topics' log start and end offsets,
// and it commits offsets. It wraps franz-go's admin client.
type Client struct {
	kc  *kgo.Client
	adm *kadm.Client
}

// New connects with franz-go client options (seed brokers, TLS, SASL).
func New(opts ...kgo.Opt) (*Client, error) {
	kc, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	return &Client{kc: kc, adm: kadm.NewClient(kc)}, nil
}

// Close closes the connections.
func (c *Client) Close() { c.kc.Close() }

// TopicPartition is a partition of a (user) topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s:%d", tp.Topic, tp.Partition) }

// LiveMember is a member of a live group.
type LiveMember struct {
	MemberID   string `json:"memberId"`
	InstanceID string `json:"instanceId,omitempty"`
	ClientID   string `json:"clientId"`
	ClientHost string `json:"clientHost"`
}

// LiveGroup is a group as the cluster reports it now.
type LiveGroup struct {
	GroupID string `json:"groupId"`
	// Exists is false when the cluster does not list the group (never created, deleted, or
	// expired): committing offsets creates it as a simple classic group.
	Exists       bool         `json:"exists"`
	Type         string       `json:"type,omitempty"` // classic, consumer, share, streams
	State        string       `json:"state,omitempty"`
	ProtocolType string       `json:"protocolType,omitempty"`
	Members      []LiveMember `json:"members,omitempty"`
}

// Empty reports whether the group has no member (or does not exist): Kafka accepts offset
// commits from outside the group only then.
func (g LiveGroup) Empty() bool { return len(g.Members) == 0 }

// DescribeGroup finds the group's type through ListGroups and describes it with the request of
// its type (DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe, StreamsGroupDescribe).
func (c *Client) DescribeGroup(ctx context.Context, group string) (LiveGroup, error) {
	out := LiveGroup{GroupID: group}
	listed, err := c.adm.ListGroups(ctx)
	if err != nil {
		return out, fmt.Errorf("list groups: %w", err)
	}
	l, ok := listed[group]
	if !ok {
		return out, nil
	}
	out.Exists, out.Type, out.State, out.ProtocolType = true, strings.ToLower(l.GroupType), l.State, l.ProtocolType
	if out.Type == "" {
		out.Type = "classic" // ListGroups before v5 lists classic groups only
	}
	switch out.Type {
	case "classic":
		ds, err := c.adm.DescribeGroups(ctx, group)
		if err != nil {
			return out, fmt.Errorf("describe group %s: %w", group, err)
		}
		d := ds[group]
		if d.Err != nil {
			return out, fmt.Errorf("describe group %s: %w", group, d.Err)
		}
		out.State = d.State
		for _, m := range d.Members {
			out.Members = append(out.Members, LiveMember{MemberID: m.MemberID, InstanceID: deref(m.InstanceID), ClientID: m.ClientID, ClientHost: m.ClientHost})
		}
	case "consumer":
		ds, err := c.adm.DescribeConsumerGroups(ctx, group)
		if err != nil {
			return out, fmt.Errorf("describe consumer group %s: %w", group, err)
		}
		d := ds[group]
		if d.Err != nil {
			return out, fmt.Errorf("describe consumer group %s: %w", group, d.Err)
		}
		out.State = d.State
		for _, m := range d.Members {
			out.Members = append(out.Members, LiveMember{MemberID: m.MemberID, InstanceID: deref(m.InstanceID), ClientID: m.ClientID, ClientHost: m.ClientHost})
		}
	case "share":
		ds, err := c.adm.DescribeShareGroups(ctx, group)
		if err != nil {
			return out, fmt.Errorf("describe share group %s: %w", group, err)
		}
		d := ds[group]
		if d.Err != nil {
			return out, fmt.Errorf("describe share group %s: %w", group, d.Err)
		}
		out.State = d.GroupState
		for _, m := range d.Members {
			out.Members = append(out.Members, LiveMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost})
		}
	case "streams":
		if err := c.describeStreams(ctx, &out); err != nil {
			return out, err
		}
	}
	slices.SortFunc(out.Members, func(a, b LiveMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	return out, nil
}

// describeStreams sends StreamsGroupDescribe (KIP-1071) to the group's coordinator: franz-go's
// client does not route it by itself.
func (c *Client) describeStreams(ctx context.Context, g *LiveGroup) error {
	coords := c.adm.FindGroupCoordinators(ctx, g.GroupID)
	co, ok := coords[g.GroupID]
	if !ok || co.Err != nil {
		return fmt.Errorf("find the coordinator of streams group %s: %w", g.GroupID, errors.Join(co.Err, errIf(!ok, "no answer")))
	}
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{g.GroupID}
	resp, err := req.RequestWith(ctx, c.kc.Broker(int(co.NodeID)))
	if err != nil {
		return fmt.Errorf("describe streams group %s: %w", g.GroupID, err)
	}
	for _, rg := range resp.Groups {
		if rg.Group != g.GroupID {
			continue
		}
		if err := kerr.ErrorForCode(rg.ErrorCode); err != nil {
			return fmt.Errorf("describe streams group %s: %w", g.GroupID, err)
		}
		g.State = rg.State
		for _, m := range rg.Members {
			g.Members = append(g.Members, LiveMember{MemberID: m.MemberID, InstanceID: deref(m.InstanceID), ClientID: m.ClientID, ClientHost: m.ClientHost})
		}
		return nil
	}
	return fmt.Errorf("describe streams group %s: not in the response", g.GroupID)
}

func errIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Committed is a committed offset as OffsetFetch returns it.
type Committed struct {
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leaderEpoch"`
	Metadata    string `json:"metadata"`
}

// CommittedOffsets returns the group's committed offsets (OffsetFetch; streams groups use the
// same API, as Kafka's Admin.listStreamsGroupOffsets does).
func (c *Client) CommittedOffsets(ctx context.Context, group string) (map[TopicPartition]Committed, error) {
	rs, err := c.adm.FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("fetch the committed offsets of %s: %w", group, err)
	}
	out := map[TopicPartition]Committed{}
	var errs []error
	rs.Each(func(r kadm.OffsetResponse) {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", r.Topic, r.Partition, r.Err))
			return
		}
		if r.At < 0 {
			return
		}
		out[TopicPartition{r.Topic, r.Partition}] = Committed{Offset: r.At, LeaderEpoch: r.LeaderEpoch, Metadata: r.Metadata}
	})
	if len(errs) > 0 {
		return out, fmt.Errorf("fetch the committed offsets of %s: %w", group, errors.Join(errs...))
	}
	return out, nil
}

// LogOffsets are a partition's log start and end offsets (ListOffsets, read uncommitted, as
// kafka-consumer-groups --describe reads them).
type LogOffsets struct {
	Start, End int64
}

// TopicLogs are the partitions of the topics asked for; Missing the topics the cluster does
// not have (deleted, or never created), with the error it gave.
type TopicLogs struct {
	Partitions map[TopicPartition]LogOffsets
	Missing    map[string]error
}

// LogOffsets lists the start and end offsets of every partition of topics.
func (c *Client) LogOffsets(ctx context.Context, topics []string) (TopicLogs, error) {
	out := TopicLogs{Partitions: map[TopicPartition]LogOffsets{}, Missing: map[string]error{}}
	if len(topics) == 0 {
		return out, nil
	}
	ends, err := c.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return out, fmt.Errorf("list end offsets: %w", err)
	}
	starts, err := c.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return out, fmt.Errorf("list start offsets: %w", err)
	}
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Partition < 0 { // a topic-level error: the topic is not there
			out.Missing[o.Topic] = o.Err
			return
		}
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		tp := TopicPartition{o.Topic, o.Partition}
		lo := out.Partitions[tp]
		lo.End = o.Offset
		out.Partitions[tp] = lo
	})
	starts.Each(func(o kadm.ListedOffset) {
		tp := TopicPartition{o.Topic, o.Partition}
		if lo, ok := out.Partitions[tp]; ok && o.Err == nil {
			lo.Start = o.Offset
			out.Partitions[tp] = lo
		}
	})
	for _, t := range topics {
		has := false
		for tp := range out.Partitions {
			if tp.Topic == t {
				has = true
				break
			}
		}
		if _, missing := out.Missing[t]; !has && !missing {
			out.Missing[t] = kerr.UnknownTopicOrPartition
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("list offsets: %w", errors.Join(errs...))
	}
	return out, nil
}

// Commit commits offsets for group from outside it (OffsetCommit with no member: what Kafka's
// Admin.alterConsumerGroupOffsets and alterStreamsGroupOffsets send), returning the error of
// each partition that failed. Kafka accepts it only while the group has no member.
func (c *Client) Commit(ctx context.Context, group string, offs map[TopicPartition]Committed) (map[TopicPartition]error, error) {
	os := kadm.Offsets{}
	for tp, o := range offs {
		os.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata})
	}
	rs, err := c.adm.CommitOffsets(ctx, group, os)
	if err != nil {
		return nil, fmt.Errorf("commit offsets of %s: %w", group, err)
	}
	failed := map[TopicPartition]error{}
	rs.Each(func(r kadm.OffsetResponse) {
		if r.Err != nil {
			failed[TopicPartition{r.Topic, r.Partition}] = r.Err
		}
	})
	for tp := range offs {
		if _, ok := rs.Lookup(tp.Topic, tp.Partition); !ok {
			failed[tp] = errors.New("not in the commit response")
		}
	}
	return failed, nil
}
