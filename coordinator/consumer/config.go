package consumer

import (
	"fmt"
	"math"
	"slices"
)

// Migration policies (group.consumer.migration.policy): which conversions between a classic
// group and a consumer group happen online, while the group has members.
const (
	MigrationBidirectional = "bidirectional"
	MigrationUpgrade       = "upgrade"
	MigrationDowngrade     = "downgrade"
	MigrationDisabled      = "disabled"
)

// Config is the effective configuration of one consumer group: Kafka's broker configs
// (group.consumer.*) with the group's overrides (consumer.*) applied. Start from
// DefaultConfig.
type Config struct {
	SessionTimeoutMs    int32 // consumer.session.timeout.ms (45000)
	HeartbeatIntervalMs int32 // consumer.heartbeat.interval.ms (5000)
	MaxSize             int32 // group.consumer.max.size (MaxInt32)
	// Assignors is group.consumer.assignors: the server assignors members may name; the
	// first is the default (uniform, range).
	Assignors            []string
	MigrationPolicy      string // group.consumer.migration.policy (bidirectional)
	AssignmentIntervalMs int32  // consumer.assignment.interval.ms (1000)
	// RegexRefreshIntervalMs is group.consumer.regex.refresh.interval.ms (internal, 600000):
	// resolved regular expressions are resolved again after it.
	RegexRefreshIntervalMs int64
	// ClassicMaxSize is group.max.size (MaxInt32): a consumer group with more members cannot
	// be downgraded to a classic group.
	ClassicMaxSize int32
	// ClassicMinSessionTimeoutMs and ClassicMaxSessionTimeoutMs are group.min.session.timeout.ms
	// (6000) and group.max.session.timeout.ms (1800000): the session timeouts a JoinGroup may
	// ask for.
	ClassicMinSessionTimeoutMs int32
	ClassicMaxSessionTimeoutMs int32
}

// DefaultConfig returns Kafka 4.4's defaults.
func DefaultConfig() Config {
	return Config{
		SessionTimeoutMs: 45000, HeartbeatIntervalMs: 5000, MaxSize: math.MaxInt32,
		Assignors: []string{AssignorUniform, AssignorRange}, MigrationPolicy: MigrationBidirectional,
		AssignmentIntervalMs: 1000, RegexRefreshIntervalMs: 600000, ClassicMaxSize: math.MaxInt32,
		ClassicMinSessionTimeoutMs: 6000, ClassicMaxSessionTimeoutMs: 1800000,
	}
}

// Validate checks the bounds Kafka enforces on these configs.
func (c Config) Validate() error {
	switch {
	case c.SessionTimeoutMs < 1 || c.HeartbeatIntervalMs < 1:
		return fmt.Errorf("consumer: session timeout %d and heartbeat interval %d must be >= 1", c.SessionTimeoutMs, c.HeartbeatIntervalMs)
	case c.SessionTimeoutMs <= c.HeartbeatIntervalMs:
		return fmt.Errorf("consumer: session timeout %d must exceed the heartbeat interval %d", c.SessionTimeoutMs, c.HeartbeatIntervalMs)
	case c.MaxSize < 1 || c.ClassicMaxSize < 1:
		return fmt.Errorf("consumer: max size %d and classic max size %d must be >= 1", c.MaxSize, c.ClassicMaxSize)
	case len(c.Assignors) == 0:
		return fmt.Errorf("consumer: no assignor configured")
	case c.AssignmentIntervalMs < 0:
		return fmt.Errorf("consumer: assignment interval %d must be >= 0", c.AssignmentIntervalMs)
	case c.ClassicMinSessionTimeoutMs < 1 || c.ClassicMaxSessionTimeoutMs < c.ClassicMinSessionTimeoutMs:
		return fmt.Errorf("consumer: classic session timeouts [%d, %d]: the minimum must be >= 1 and not above the maximum", c.ClassicMinSessionTimeoutMs, c.ClassicMaxSessionTimeoutMs)
	case c.RegexRefreshIntervalMs < 10000:
		return fmt.Errorf("consumer: regex refresh interval %d must be >= 10000", c.RegexRefreshIntervalMs)
	}
	for i, a := range c.Assignors {
		if a != AssignorUniform && a != AssignorRange {
			return fmt.Errorf("consumer: assignor %q is not built in (uniform, range); custom assignors are not supported", a)
		}
		if slices.Contains(c.Assignors[:i], a) {
			return fmt.Errorf("consumer: assignor %q is listed twice", a)
		}
	}
	switch c.MigrationPolicy {
	case MigrationBidirectional, MigrationUpgrade, MigrationDowngrade, MigrationDisabled:
	default:
		return fmt.Errorf("consumer: unknown migration policy %q (bidirectional, upgrade, downgrade, disabled)", c.MigrationPolicy)
	}
	return nil
}

func (c Config) upgradeEnabled() bool {
	return c.MigrationPolicy == MigrationBidirectional || c.MigrationPolicy == MigrationUpgrade
}

func (c Config) downgradeEnabled() bool {
	return c.MigrationPolicy == MigrationBidirectional || c.MigrationPolicy == MigrationDowngrade
}
