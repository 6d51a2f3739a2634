package streams

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Assignor names.
const (
	// AssignorSticky is Kafka 4.4's only built-in assignor (StickyTaskAssignor).
	AssignorSticky = "sticky"
	// AssignorHighlyAvailable is the sticky assignor plus KIP-1071 warm-up tasks: a stateful
	// active task that moves to a member whose process has not caught up is left on its
	// previous owner and the new owner gets a warm-up until its lag is within
	// AcceptableRecoveryLag. Kafka 4.4 does not assign warm-ups (see doc.go).
	AssignorHighlyAvailable = "highly_available"
)

// Config is the effective configuration of one streams group: Kafka's broker configs
// (group.streams.*) with the group's overrides (streams.*) already applied. The zero value
// is not useful; start from DefaultConfig.
type Config struct {
	SessionTimeoutMs        int32    // streams.session.timeout.ms (45000)
	HeartbeatIntervalMs     int32    // streams.heartbeat.interval.ms (5000)
	MaxSize                 int32    // group.streams.max.size (MaxInt32)
	NumStandbyReplicas      int32    // streams.num.standby.replicas (0)
	RackAwareAssignmentTags []string // streams.rack.aware.assignment.tags (none)
	InitialRebalanceDelayMs int32    // streams.initial.rebalance.delay.ms (3000)
	AssignmentIntervalMs    int32    // streams.assignment.interval.ms (1000)
	TaskOffsetIntervalMs    int32    // streams.task.offset.interval.ms (60000)
	NumWarmupReplicas       int32    // streams.num.warmup.replicas (2; only acts with AssignorHighlyAvailable)
	AcceptableRecoveryLag   int64    // streams.acceptable.recovery.lag (10000)

	// Assignor is AssignorSticky (default, Kafka 4.4) or AssignorHighlyAvailable (KIP-1071).
	Assignor string
	// TopologyUpdates selects KIP-1071's topology epoch rules (a rejoin with epoch+1 replaces
	// the topology; STREAMS_TOPOLOGY_FENCED and STREAMS_INVALID_TOPOLOGY_EPOCH). Kafka 4.4
	// rejects every topology change with INVALID_REQUEST (the default, false).
	TopologyUpdates bool
}

// DefaultConfig returns Kafka 4.4's defaults.
func DefaultConfig() Config {
	return Config{
		SessionTimeoutMs:        45000,
		HeartbeatIntervalMs:     5000,
		MaxSize:                 math.MaxInt32,
		NumStandbyReplicas:      0,
		InitialRebalanceDelayMs: 3000,
		AssignmentIntervalMs:    1000,
		TaskOffsetIntervalMs:    60000,
		NumWarmupReplicas:       2,
		AcceptableRecoveryLag:   10000,
		Assignor:                AssignorSticky,
	}
}

// Validate checks the bounds Kafka enforces on these configs.
func (c Config) Validate() error {
	switch {
	case c.SessionTimeoutMs < 1:
		return fmt.Errorf("coordinator: session timeout %d must be >= 1", c.SessionTimeoutMs)
	case c.HeartbeatIntervalMs < 1:
		return fmt.Errorf("coordinator: heartbeat interval %d must be >= 1", c.HeartbeatIntervalMs)
	case c.SessionTimeoutMs <= c.HeartbeatIntervalMs:
		return fmt.Errorf("coordinator: session timeout %d must exceed the heartbeat interval %d", c.SessionTimeoutMs, c.HeartbeatIntervalMs)
	case c.MaxSize < 1:
		return fmt.Errorf("coordinator: max size %d must be >= 1", c.MaxSize)
	case c.NumStandbyReplicas < 0 || c.NumWarmupReplicas < 0 || c.InitialRebalanceDelayMs < 0 || c.AssignmentIntervalMs < 0 || c.AcceptableRecoveryLag < 0:
		return fmt.Errorf("coordinator: negative standby, warm-up, delay, interval or lag config")
	case c.TaskOffsetIntervalMs < 1:
		return fmt.Errorf("coordinator: task offset interval %d must be >= 1", c.TaskOffsetIntervalMs)
	case c.Assignor != "" && c.Assignor != AssignorSticky && c.Assignor != AssignorHighlyAvailable:
		return fmt.Errorf("coordinator: unknown assignor %q", c.Assignor)
	}
	return nil
}

func (c Config) warmups() bool {
	return c.Assignor == AssignorHighlyAvailable && c.NumWarmupReplicas > 0
}

// Keys of record 17's LastAssignmentConfigs (AssignmentConfigsImpl).
const (
	configNumStandbyReplicas      = "num.standby.replicas"
	configRackAwareAssignmentTags = "rack.aware.assignment.tags"
	// configWarmups records the KIP warm-up settings, only when AssignorHighlyAvailable is
	// chosen, so that a change of them bumps the group epoch like the other assignment
	// configs. Kafka 4.4 never writes this key.
	configNumWarmupReplicas     = "num.warmup.replicas"
	configAcceptableRecoveryLag = "acceptable.recovery.lag"
)

// assignmentConfigs is streamsGroupAssignmentConfigs: the map written to record 17 and
// compared with the stored one (a change bumps the group epoch). Sorted by key.
func (c Config) assignmentConfigs() []kv {
	out := []kv{}
	if c.warmups() {
		out = append(out, kv{configAcceptableRecoveryLag, strconv.FormatInt(c.AcceptableRecoveryLag, 10)})
	}
	out = append(out, kv{configNumStandbyReplicas, strconv.Itoa(int(c.NumStandbyReplicas))})
	if c.warmups() {
		out = append(out, kv{configNumWarmupReplicas, strconv.Itoa(int(c.NumWarmupReplicas))})
	}
	if len(c.RackAwareAssignmentTags) > 0 {
		out = append(out, kv{configRackAwareAssignmentTags, strings.Join(c.RackAwareAssignmentTags, ",")})
	}
	return out
}

type kv struct{ k, v string }

func sameKVs(a, b []kv) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
