package consumer

import (
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Offsets of consumer groups (OffsetMetadataManager with ConsumerGroup's validation). These
// calls decide for consumer groups and for groups that do not exist; a group of another type
// (classic, share, streams) is not this coordinator's: the call returns ErrNotConsumerGroup
// and decides nothing.

// ErrNotConsumerGroup is returned for a group of another type than consumer.
var ErrNotConsumerGroup = fmt.Errorf("consumer: the group is not a consumer group; its coordinator decides")

// OffsetMetadataMaxBytes is offset.metadata.max.bytes (4096): a commit whose metadata is
// longer fails for that partition with OFFSET_METADATA_TOO_LARGE.
const OffsetMetadataMaxBytes = 4096

const errOffsetMetadataTooLarge int16 = 12

// OffsetCommitResult is an OffsetCommit decision: one record 1 per committed partition.
type OffsetCommitResult struct {
	Response *kmsg.OffsetCommitResponse
	Records  []recordcodec.Record
}

// OffsetCommit decides an OffsetCommit (versions 0-10): a missing group accepts commits with
// a negative generation (Kafka creates a simple group, which replaying the records does
// too); a consumer group checks the member (UNKNOWN_MEMBER_ID; UNSUPPORTED_VERSION below v9
// for consumer-protocol members) and its epoch: equal is accepted, newer is
// STALE_MEMBER_EPOCH, older is accepted per partition when the partition is assigned or
// pending revocation at an assignment epoch not above it (4.3+). A failed check fails every
// partition. Topic ids (v10) resolve through md; an unknown id is UNKNOWN_TOPIC_ID.
func (c *Coordinator) OffsetCommit(st groupstate.View, md *coordinator.Metadata, req *kmsg.OffsetCommitRequest, now int64) (OffsetCommitResult, error) {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = req.Version
	fail := func(code int16) OffsetCommitResult {
		for _, t := range req.Topics {
			rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return OffsetCommitResult{Response: resp}
	}
	var validate func(topic string, id Uuid, p int32) *coordinator.Error
	typ, exists := st.GroupType(req.Group)
	switch {
	case !exists:
		if req.Generation >= 0 {
			if req.Version >= 9 {
				return fail(coordinator.ErrGroupIDNotFound), nil
			}
			return fail(coordinator.ErrIllegalGeneration), nil
		}
	case typ != groupstate.GroupTypeConsumer:
		if cg, ok := st.ClassicGroup(req.Group); !(ok && cg.Simple && req.Generation < 0) {
			return OffsetCommitResult{}, ErrNotConsumerGroup
		}
	default:
		v, _ := st.ConsumerGroup(req.Group)
		g := groupFromView(&v)
		var err *coordinator.Error
		if validate, err = commitValidator(g, req.MemberID, req.Generation, req.Version); err != nil {
			return fail(err.Code), nil
		}
	}
	expire := int64(-1)
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
		expire = now + req.RetentionTimeMillis
	}
	var records []recordcodec.Record
	for _, t := range req.Topics {
		name, id := t.Topic, Uuid(t.TopicID)
		rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
		unknownID := false
		if req.Version >= 10 {
			var known bool
			name, known = topicNameByID(md, id)
			unknownID = !known
		}
		for _, p := range t.Partitions {
			code := coordinator.ErrNone
			switch {
			case unknownID:
				code = 100 // UNKNOWN_TOPIC_ID
			case p.Metadata != nil && len(*p.Metadata) > OffsetMetadataMaxBytes:
				code = errOffsetMetadataTooLarge
			case validate != nil:
				if err := validate(name, id, p.Partition); err != nil {
					return fail(err.Code), nil
				}
			}
			rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			if code != coordinator.ErrNone {
				continue
			}
			records = append(records, offsetCommitRecord(req.Group, name, p, id, now, expire))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return OffsetCommitResult{Response: resp, Records: records}, nil
}

func topicNameByID(md *coordinator.Metadata, id Uuid) (string, bool) {
	if md == nil {
		return "", false
	}
	for n, t := range md.Topics {
		if t.ID == id {
			return n, true
		}
	}
	return "", false
}

// offsetCommitRecord is newOffsetCommitRecord: value version 1 with an expire timestamp,
// else 4 (with the topic id, zero for requests that name topics).
func offsetCommitRecord(group, topic string, p kmsg.OffsetCommitRequestTopicPartition, id Uuid, now, expire int64) recordcodec.Record {
	v := recordcodec.NewOffsetCommitValue()
	v.Version = 4
	if expire != -1 {
		v.Version = 1
	}
	v.Offset, v.LeaderEpoch, v.CommitTimestamp, v.ExpireTimestamp = p.Offset, p.LeaderEpoch, now, expire
	if p.Metadata != nil {
		v.Metadata = *p.Metadata
	}
	v.TopicId = recordcodec.UUID(id)
	return recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: group, Topic: topic, Partition: p.Partition}, Value: v}
}

// commitValidator is ConsumerGroup.validateOffsetCommit (non-transactional).
func commitValidator(g *group, memberID string, epoch int32, version int16) (func(string, Uuid, int32) *coordinator.Error, *coordinator.Error) {
	if epoch < 0 && len(g.members) == 0 {
		return nil, nil
	}
	m := g.members[memberID]
	if m == nil {
		return nil, coordinator.Errorf(coordinator.ErrUnknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
	}
	if !m.usesClassic() && version < 9 {
		return nil, coordinator.Errorf(coordinator.ErrUnsupportedVersion, "OffsetCommit version 9 or above must be used by members using the consumer group protocol")
	}
	staleCode := coordinator.ErrStaleMemberEpoch
	if m.usesClassic() {
		staleCode = coordinator.ErrIllegalGeneration
	}
	switch {
	case epoch == m.epoch:
		return nil, nil
	case epoch > m.epoch:
		return nil, coordinator.Errorf(staleCode, "Received member epoch %d is newer than current member epoch %d.", epoch, m.epoch)
	}
	return func(topic string, id Uuid, p int32) *coordinator.Error {
		e, ok := m.assigned[id][p]
		if !ok {
			e, ok = m.pending[id][p]
		}
		if !ok {
			return coordinator.Errorf(staleCode, "Partition %s-%d is not assigned or pending revocation for member.", topic, p)
		}
		if epoch < e {
			return coordinator.Errorf(staleCode, "Received member epoch %d is older than assignment epoch %d for partition %s-%d.", epoch, e, topic, p)
		}
		return nil
	}, nil
}

const errUnstableOffsetCommit int16 = 88

// OffsetFetch answers one group of an OffsetFetch (v8+ form; requireStable reports
// partitions with pending transactional offsets as UNSTABLE_OFFSET_COMMIT). A consumer group
// checks the member: a null member id with a negative epoch is accepted, otherwise the
// member must exist (UNKNOWN_MEMBER_ID) at exactly the epoch (STALE_MEMBER_EPOCH). topics
// nil fetches every committed offset of the group.
func (c *Coordinator) OffsetFetch(st groupstate.View, req *kmsg.OffsetFetchRequestGroup, requireStable bool) (kmsg.OffsetFetchResponseGroup, error) {
	out := kmsg.OffsetFetchResponseGroup{Group: req.Group}
	typ, exists := st.GroupType(req.Group)
	if exists && typ != groupstate.GroupTypeConsumer {
		if cg, ok := st.ClassicGroup(req.Group); !(ok && cg.Simple) {
			return out, ErrNotConsumerGroup
		}
	}
	if exists && typ == groupstate.GroupTypeConsumer && !(req.MemberID == nil && req.MemberEpoch < 0) {
		v, _ := st.ConsumerGroup(req.Group)
		g := groupFromView(&v)
		id := ""
		if req.MemberID != nil {
			id = *req.MemberID
		}
		m := g.members[id]
		switch {
		case m == nil:
			out.ErrorCode = coordinator.ErrUnknownMemberID
			return out, nil
		case m.epoch != req.MemberEpoch:
			out.ErrorCode = coordinator.ErrStaleMemberEpoch
			if m.usesClassic() {
				out.ErrorCode = coordinator.ErrIllegalGeneration
			}
			return out, nil
		}
	}
	partition := func(topic string, p int32) kmsg.OffsetFetchResponseGroupTopicPartition {
		empty := ""
		rp := kmsg.OffsetFetchResponseGroupTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, Metadata: &empty}
		if requireStable && len(st.OpenTransactions(req.Group, topic, p)) > 0 {
			rp.ErrorCode = errUnstableOffsetCommit
			return rp
		}
		if o, ok := st.Offset(req.Group, topic, p); ok && exists {
			md := o.Metadata
			rp.Offset, rp.LeaderEpoch, rp.Metadata = o.CommittedOffset, o.LeaderEpoch, &md
		}
		return rp
	}
	if req.Topics == nil {
		if !exists {
			out.Topics = []kmsg.OffsetFetchResponseGroupTopic{}
			return out, nil
		}
		var cur *kmsg.OffsetFetchResponseGroupTopic
		for _, o := range st.Offsets(req.Group) {
			if cur == nil || cur.Topic != o.Topic {
				out.Topics = append(out.Topics, kmsg.OffsetFetchResponseGroupTopic{Topic: o.Topic})
				cur = &out.Topics[len(out.Topics)-1]
			}
			cur.Partitions = append(cur.Partitions, partition(o.Topic, o.Partition))
		}
		return out, nil
	}
	for _, t := range req.Topics {
		rt := kmsg.OffsetFetchResponseGroupTopic{Topic: t.Topic, TopicID: t.TopicID}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, partition(t.Topic, p))
		}
		out.Topics = append(out.Topics, rt)
	}
	return out, nil
}

// OffsetDeleteResult is an OffsetDelete decision: tombstones of record 1.
type OffsetDeleteResult struct {
	Response *kmsg.OffsetDeleteResponse
	Records  []recordcodec.Record
}

// OffsetDelete decides an OffsetDelete: the group must exist (GROUP_ID_NOT_FOUND); the
// partitions of a topic the group subscribes to (by name, or through a resolved regex) fail
// with GROUP_SUBSCRIBED_TO_TOPIC; the others get a tombstone if they have a committed or a
// pending transactional offset.
func (c *Coordinator) OffsetDelete(st groupstate.View, req *kmsg.OffsetDeleteRequest) (OffsetDeleteResult, error) {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = req.Version
	typ, exists := st.GroupType(req.Group)
	if !exists {
		resp.ErrorCode = coordinator.ErrGroupIDNotFound
		return OffsetDeleteResult{Response: resp}, nil
	}
	subscribed := map[string]bool{}
	switch typ {
	case groupstate.GroupTypeConsumer:
		v, _ := st.ConsumerGroup(req.Group)
		g := groupFromView(&v)
		for n := range g.subscribedTopicNames(nil, nil, nil) {
			subscribed[n] = true
		}
	default:
		if cg, ok := st.ClassicGroup(req.Group); !(ok && cg.Simple) {
			return OffsetDeleteResult{}, ErrNotConsumerGroup
		}
	}
	var records []recordcodec.Record
	for _, t := range req.Topics {
		rt := kmsg.OffsetDeleteResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition}
			if subscribed[t.Topic] {
				rp.ErrorCode = coordinator.ErrGroupSubscribedToTopic
			} else if _, ok := st.Offset(req.Group, t.Topic, p.Partition); ok || len(st.OpenTransactions(req.Group, t.Topic, p.Partition)) > 0 {
				records = append(records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: req.Group, Topic: t.Topic, Partition: p.Partition}})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return OffsetDeleteResult{Response: resp, Records: records}, nil
}

// DeleteGroupsResult is a DeleteGroups decision over consumer groups and missing groups.
type DeleteGroupsResult struct {
	Response *kmsg.DeleteGroupsResponse
	Records  []recordcodec.Record
	// NotDecided lists the groups of other types, left to their coordinators (not in
	// Response).
	NotDecided []string
}

// DeleteGroups decides a DeleteGroups: a missing group is GROUP_ID_NOT_FOUND, a consumer
// group with members NON_EMPTY_GROUP; an empty consumer group's offsets are tombstoned, then
// the group (createGroupTombstoneRecords: 8 and 7 per member, 6, 5 per member, 16 per regex,
// 4, 3). Its timers are cancelled in soft.
func (c *Coordinator) DeleteGroups(st groupstate.View, soft *Soft, req *kmsg.DeleteGroupsRequest) DeleteGroupsResult {
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Version = req.Version
	var res DeleteGroupsResult
	for _, id := range req.Groups {
		rg := kmsg.DeleteGroupsResponseGroup{Group: id}
		typ, exists := st.GroupType(id)
		switch {
		case !exists:
			rg.ErrorCode = coordinator.ErrGroupIDNotFound
		case typ != groupstate.GroupTypeConsumer:
			res.NotDecided = append(res.NotDecided, id)
			continue
		default:
			v, _ := st.ConsumerGroup(id)
			g := groupFromView(&v)
			if len(g.members) > 0 {
				rg.ErrorCode = coordinator.ErrNonEmptyGroup
				break
			}
			res.Records = append(res.Records, deleteAllOffsets(st, id)...)
			res.Records = append(res.Records, groupTombstones(g, g.memberOrder())...)
			delete(soft.Groups, id)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	res.Response = resp
	return res
}

// deleteAllOffsets is OffsetMetadataManager.deleteAllOffsets: a tombstone for every committed
// offset, and for every partition with only pending transactional offsets.
func deleteAllOffsets(st groupstate.View, id string) []recordcodec.Record {
	var recs []recordcodec.Record
	seen := map[[2]string]bool{}
	for _, o := range st.Offsets(id) {
		recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: id, Topic: o.Topic, Partition: o.Partition}})
		seen[[2]string{o.Topic, fmt.Sprint(o.Partition)}] = true
	}
	for _, tx := range st.PendingTransactions() {
		for _, o := range tx.Offsets {
			if o.GroupID == id && !seen[[2]string{o.Topic, fmt.Sprint(o.Partition)}] {
				seen[[2]string{o.Topic, fmt.Sprint(o.Partition)}] = true
				recs = append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.OffsetCommit, Group: id, Topic: o.Topic, Partition: o.Partition}})
			}
		}
	}
	return recs
}

// groupTombstones is ConsumerGroup.createGroupTombstoneRecords: 8 and 7 per member, 6, 5 per
// member, 16 per resolved regex, 4, 3; ids are the members in the order Kafka's map iterates
// them (group.memberOrder), and so are the regexes.
func groupTombstones(g *group, ids []string) []recordcodec.Record {
	var recs []recordcodec.Record
	for _, id := range ids {
		recs = append(recs, tombstone(recordcodec.ConsumerGroupCurrentMemberAssignment, g.id, id))
	}
	for _, id := range ids {
		recs = append(recs, tombstone(recordcodec.ConsumerGroupTargetAssignmentMember, g.id, id))
	}
	recs = append(recs, tombstone(recordcodec.ConsumerGroupTargetAssignmentMetadata, g.id, ""))
	for _, id := range ids {
		recs = append(recs, tombstone(recordcodec.ConsumerGroupMemberMetadata, g.id, id))
	}
	regexes := coordinator.KafkaTimelineOrder(slices.Sorted(maps.Keys(g.regexes)), coordinator.JavaStringHash)
	for _, re := range regexes {
		recs = append(recs, regexTombstone(g.id, re))
	}
	recs = append(recs, tombstone(recordcodec.ConsumerGroupPartitionMetadata, g.id, ""), tombstone(recordcodec.ConsumerGroupMetadata, g.id, ""))
	return recs
}
