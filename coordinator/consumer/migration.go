package consumer

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// Online migration between the classic and the consumer protocol
// (group.consumer.migration.policy). A non-empty classic group becomes a consumer group when
// the first consumer-protocol member joins it (upgrade); a consumer group whose last
// consumer-protocol member leaves, is fenced or is replaced by a classic static member, and
// whose remaining members all use the classic protocol, becomes a classic group again
// (downgrade). Both are one batch of records: the old group's tombstones, then the new
// group's records.

// groupMetadataValueVersion is GROUP_METADATA_VALUE_VERSION: the GroupMetadata value version
// Kafka 4.4 writes.
const groupMetadataValueVersion = 3

// upgradeClassicGroup is validateOnlineUpgrade and convertToConsumerGroup: the classic group
// cg, taken over by a consumer-protocol join, as a consumer group at epoch (and assignment
// epoch) cg's generation, every member STABLE at it, owning and targeting the partitions of its
// classic assignment (topics md does not know are dropped), subscribed to its subscription's
// topics, with its session timeout and protocol in its classic metadata. The records are the
// GroupMetadata tombstone, then per member 5, record 3 (epoch, hash), per member 7, record 6
// (epoch, timestamp 0), per member 8, members in the order of Kafka's new group (a
// TimelineHashMap filled in the iteration order of the classic group's HashMap). The soft
// state of the group starts afresh, with every member's session timer armed with its classic
// session timeout; Kafka arms them as it converts, so they stay armed even if the join then
// fails (and find no consumer group to fence).
func upgradeClassicGroup(cg *groupstate.ClassicGroup, soft *Soft, cfg Config, md *coordinator.Metadata, now int64, records *[]recordcodec.Record) (*group, *coordinator.Error) {
	id := cg.GroupID
	switch {
	case !cfg.upgradeEnabled():
		return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group because online upgrade is disabled.", id)
	case cg.ProtocolType != recordcodec.ConsumerProtocolType:
		return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the group does not use the consumer embedded protocol.", id)
	case len(cg.Members) > int(cfg.MaxSize):
		return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the group size exceeds the consumer group maximum size.", id)
	case cg.Protocol == nil:
		// Members without a protocol: Kafka's protocolName().get() throws.
		return nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
	}
	malformed := coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group because the embedded consumer protocol is malformed.", id)
	g := newGroup(id)
	g.epoch, g.assignmentEpoch, g.assignmentTimestamp = cg.Generation, cg.Generation, 0
	gen := cg.Generation
	ids := make([]string, len(cg.Members))
	byID := make(map[string]*groupstate.ClassicMember, len(cg.Members))
	for i := range cg.Members {
		ids[i] = cg.Members[i].MemberID
		byID[ids[i]] = &cg.Members[i]
	}
	// ClassicGroup.allMembers(): a HashMap of the members (in the order they joined, which the
	// log does not keep: sorted ids stand for it).
	coordinator.JavaHashOrder(ids, coordinator.JavaStringHash, coordinator.JavaMapCapacityDefault(len(ids)))
	for _, mid := range ids {
		cm := byID[mid]
		var assigned partitions
		if len(cm.Assignment) > 0 {
			a, err := recordcodec.DecodeConsumerAssignmentLenient(cm.Assignment)
			if err != nil {
				return nil, malformed
			}
			if len(a.UserData) > 0 {
				return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group because an unsupported custom assignor is in use. "+
					"Please refer to the documentation or switch to a default assignor before re-attempting the upgrade.", id)
			}
			for _, tp := range a.AssignedPartitions {
				t, ok := md.Topic(tp.Topic)
				if !ok {
					continue
				}
				for _, p := range tp.Partitions {
					if assigned == nil {
						assigned = partitions{}
					}
					put(assigned, t.ID, p, gen)
				}
			}
		}
		sub, err := recordcodec.DecodeConsumerSubscriptionLenient(cm.Subscription)
		if err != nil {
			return nil, malformed
		}
		m := &member{
			id: mid, epoch: gen, prevEpoch: gen, state: stateStable,
			instanceID: cm.GroupInstanceID, rackID: nonEmpty(sub.RackId),
			rebalanceTimeoutMs: cm.RebalanceTimeoutMs, clientID: cm.ClientID, clientHost: cm.ClientHost,
			names: sortedSet(sub.Topics), assigned: assigned,
			classic: &groupstate.ClassicMemberMetadata{SessionTimeoutMs: cm.SessionTimeoutMs,
				SupportedProtocols: []groupstate.ClassicProtocol{{Name: *cg.Protocol, Metadata: cm.Subscription}}},
		}
		g.members[mid] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = mid
		}
		g.target[mid] = normalizeTarget(MemberAssignment(assigned.sets()))
	}
	g.metadataHash = groupHash(g.subscribedTopicNames(nil, nil, nil), md)

	// ConsumerGroup.fromClassicGroup puts each member once into the new group's map, in the
	// order it took them.
	g.memberTable = timelineTable{inserted: ids, slots: coordinator.KafkaTimelineSlots(len(ids))}
	order := g.memberOrder()
	*records = append(*records, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: id}})
	for _, mid := range order {
		*records = append(*records, memberMetadataRecord(id, g.members[mid]))
	}
	*records = append(*records, groupMetadataRecord(id, g.epoch, g.metadataHash))
	for _, mid := range order {
		*records = append(*records, targetMemberRecord(id, mid, g.target[mid]))
	}
	*records = append(*records, targetMetadataRecord(id, g.assignmentEpoch, 0))
	for _, mid := range order {
		*records = append(*records, currentAssignmentRecord(id, g.members[mid]))
	}

	delete(soft.Groups, id)
	gs := soft.group(id)
	for _, mid := range order {
		gs.Member(mid).ArmSession(now, g.members[mid].classic.SessionTimeoutMs)
	}
	return g, nil
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	v := *s
	return &v
}

// downgradeOnFence is validateOnlineDowngradeWithFencedMembers: the group goes back to a
// classic group when the members in gone leave it, if every remaining member uses the classic
// protocol, some remain, the policy allows downgrades and they fit group.max.size.
func (g *group) downgradeOnFence(cfg Config, gone map[string]bool) bool {
	remaining := 0
	for id, m := range g.members {
		if gone[id] {
			continue
		}
		if !m.usesClassic() {
			return false
		}
		remaining++
	}
	return remaining > 0 && cfg.downgradeEnabled() && remaining <= int(cfg.ClassicMaxSize)
}

// downgradeOnReplace is validateOnlineDowngradeWithReplacedMember: a classic-protocol static
// member replacing old (the holder of its instance id) downgrades the group when old was the
// only member using the consumer protocol, the policy allows downgrades and the group fits
// group.max.size.
func (g *group) downgradeOnReplace(cfg Config, old *member) bool {
	return g.numClassic() == len(g.members)-1 && !old.usesClassic() && cfg.downgradeEnabled() &&
		len(g.members) <= int(cfg.ClassicMaxSize)
}

// toClassicGroup is convertToClassicGroup's records: the consumer group's tombstones
// (createGroupTombstoneRecords; with a joining static member, its id stands for the member it
// replaces), then the GroupMetadata record of the classic group ClassicGroup.fromConsumerGroup
// builds: generation = the group epoch, protocol type "consumer", the protocol the members
// vote for, the first member as leader, currentStateTimestamp now, and per member (without
// the ones in gone; joining last, in place of the member it replaces) its classic metadata and
// its target assignment as a ConsumerProtocolAssignment at the version of its subscription.
// A subscription whose version cannot be read fails the conversion, as in Kafka
// (GROUP_ID_NOT_FOUND).
func (g *group) toClassicGroup(gone map[string]bool, joining *member, md *coordinator.Metadata, now int64) ([]recordcodec.Record, *coordinator.Error) {
	order := g.memberOrder()
	replacedID := ""
	if joining != nil && joining.instanceID != nil {
		replacedID = g.static[*joining.instanceID]
	}
	tombIDs := slices.Clone(order)
	for i, id := range tombIDs {
		if id == replacedID {
			tombIDs[i] = joining.id
		}
	}
	recs := groupTombstones(g, tombIDs)

	var members []*member
	for _, id := range order {
		m := g.members[id]
		if gone[id] || (joining != nil && joining.instanceID != nil && coordinator.SameString(m.instanceID, joining.instanceID)) {
			continue
		}
		members = append(members, m)
	}
	if joining != nil {
		members = append(members, joining)
	}
	if len(members) == 0 {
		return nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
	}
	protocol, ok := selectProtocol(members)
	if !ok {
		// ClassicGroup.add or ClassicGroupMember.vote throws.
		return nil, coordinator.Errorf(coordinator.ErrUnknownServerError, "")
	}
	leader := members[0].id
	// The classic group's members: a HashMap filled in that order.
	ids := make([]string, len(members))
	byID := make(map[string]*member, len(members))
	for i, m := range members {
		ids[i], byID[m.id] = m.id, m
	}
	coordinator.JavaHashOrder(ids, coordinator.JavaStringHash, coordinator.JavaMapCapacityDefault(len(ids)))
	v := recordcodec.NewGroupMetadataValue()
	v.Version = groupMetadataValueVersion
	v.ProtocolType, v.Generation, v.Protocol, v.Leader, v.CurrentStateTimestamp = recordcodec.ConsumerProtocolType, g.epoch, &protocol, &leader, now
	for _, id := range ids {
		m := byID[id]
		sub := m.classicMetadata(protocol)
		targetID := id
		if joining != nil && id == joining.id && replacedID != "" {
			targetID = replacedID
		}
		assignment, err := encodeAssignment(g.target[targetID], sub, md)
		if err != nil {
			return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot downgrade the classic group %s: %s.", g.id, err.Message)
		}
		v.Members = append(v.Members, recordcodec.MemberMetadata{
			MemberId: id, GroupInstanceId: m.instanceID, ClientId: m.clientID, ClientHost: m.clientHost,
			RebalanceTimeout: m.rebalanceTimeoutMs, SessionTimeout: m.classic.SessionTimeoutMs,
			Subscription: sub, Assignment: assignment,
		})
	}
	return append(recs, recordcodec.Record{Key: recordcodec.Key{Type: recordcodec.GroupMetadata, Group: g.id}, Value: v}), nil
}

// selectProtocol is ClassicGroup.selectProtocol: the protocols every member supports are the
// candidates; each member votes for the first candidate in its own order, and the protocol
// with the most votes wins (ties: the first in the iteration order of Kafka's HashMap of
// votes). ok is false when the members share no protocol.
func selectProtocol(members []*member) (string, bool) {
	supported := map[string]int{}
	for _, m := range members {
		for _, p := range m.classic.SupportedProtocols {
			supported[p.Name]++
		}
	}
	votes := map[string]int{}
	var voted []string
	for _, m := range members {
		vote := ""
		for _, p := range m.classic.SupportedProtocols {
			if supported[p.Name] == len(members) {
				vote = p.Name
				break
			}
		}
		if vote == "" {
			return "", false
		}
		if votes[vote] == 0 {
			voted = append(voted, vote)
		}
		votes[vote]++
	}
	coordinator.JavaHashOrder(voted, coordinator.JavaStringHash, coordinator.JavaMapCapacityDefault(len(voted)))
	best := voted[0]
	for _, n := range voted[1:] {
		if votes[n] > votes[best] {
			best = n
		}
	}
	return best, true
}

// classicMetadata is ClassicGroupMember.metadata(protocol): the member's subscription bytes
// for that protocol.
func (m *member) classicMetadata(protocol string) []byte {
	for _, p := range m.classic.SupportedProtocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// encodeAssignment is ConsumerProtocol.serializeAssignment(toConsumerProtocolAssignment(...),
// deserializeVersion(subscription)): the partitions of target by topic name (topics md does
// not know are left out), in the iteration order of Kafka's maps, at the version of the
// member's subscription (a later version is written as 3, the latest; a negative one, or bytes
// too short for a version, fail as Kafka's SchemaException does).
func encodeAssignment(target []TopicPartitions, subscription []byte, md *coordinator.Metadata) ([]byte, *coordinator.Error) {
	if len(subscription) < 2 {
		return nil, &coordinator.Error{Code: coordinator.ErrUnknownServerError, Message: "Buffer underflow while parsing consumer protocol's header"}
	}
	version := int16(binary.BigEndian.Uint16(subscription))
	if version < 0 {
		return nil, &coordinator.Error{Code: coordinator.ErrUnknownServerError, Message: "Unsupported assignment version: " + strconv.Itoa(int(version))}
	}
	a := recordcodec.NewConsumerProtocolAssignment()
	a.Version = min(version, 3)
	a.AssignedPartitions = []recordcodec.AssignedPartition{}
	for _, tp := range KafkaTargetOrder(target) {
		name, ok := topicNameByID(md, tp.Topic)
		if !ok {
			continue
		}
		a.AssignedPartitions = append(a.AssignedPartitions, recordcodec.AssignedPartition{Topic: name, Partitions: tp.Partitions})
	}
	b, err := recordcodec.EncodeConsumerAssignment(a)
	if err != nil {
		return nil, &coordinator.Error{Code: coordinator.ErrUnknownServerError, Message: err.Error()}
	}
	return b, nil
}
