package consumer

import (
	"github.com/coordlog/coordlog/coordinator"
	"github.com/coordlog/coordlog/groupstate"
	"github.com/coordlog/coordlog/recordcodec"
)

// upgradeClassicGroup is the online upgrade of a non-empty classic group by the first
// consumer-protocol join (convertToConsumerGroup). Not modelled yet: the join is refused
// with GROUP_ID_NOT_FOUND, naming the reason (Kafka 4.4 refuses it with the same code when
// the migration policy disables the upgrade).
func upgradeClassicGroup(cg *groupstate.ClassicGroup, cfg Config, md *coordinator.Metadata, now int64, records *[]recordcodec.Record) (*group, *coordinator.Error) {
	if !cfg.upgradeEnabled() {
		return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group because online upgrade is disabled.", cg.GroupID)
	}
	return nil, coordinator.Errorf(coordinator.ErrGroupIDNotFound, "Cannot upgrade classic group %s to consumer group: coordlog does not model the online upgrade of a non-empty classic group yet.", cg.GroupID)
}

// downgradeOnLeave is the online downgrade when the members that leave are the last ones
// using the consumer protocol (convertToClassicGroup). Not modelled yet: such a leave fences
// the members as in a consumer group without classic members (ok false).
func downgradeOnLeave(g *group, soft *Soft, md *coordinator.Metadata, cfg Config, ids []string) ([]recordcodec.Record, bool) {
	return nil, false
}
