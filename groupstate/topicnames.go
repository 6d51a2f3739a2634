package groupstate

// TopicNames returns the names the replayed records give topic ids (most records name topics
// by id only): offset commits of Kafka 4.1+ carry both, and so do share-group state-partition
// metadata and Kafka 4.0's consumer subscription metadata. Should records disagree, the last
// in this order wins: offsets (by group, topic, partition), share state metadata (by group),
// consumer subscription metadata (by group).
func (v View) TopicNames() map[Uuid]string {
	names := map[Uuid]string{}
	for _, gid := range v.OffsetGroupIDs() {
		for _, o := range v.Offsets(gid) {
			if !o.TopicID.IsZero() {
				names[o.TopicID] = o.Topic
			}
		}
	}
	for _, gid := range v.ShareGroupStatePartitionMetadataGroupIDs() {
		m, _ := v.ShareGroupStatePartitionMetadata(gid)
		for _, t := range m.InitializingTopics {
			names[t.TopicID] = t.TopicName
		}
		for _, t := range m.InitializedTopics {
			names[t.TopicID] = t.TopicName
		}
	}
	for _, gid := range v.GroupIDs() {
		if g, ok := v.ConsumerGroup(gid); ok {
			for _, t := range g.SubscriptionMetadata {
				names[t.TopicID] = t.TopicName
			}
		}
	}
	return names
}
