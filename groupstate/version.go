package groupstate

import "fmt"

// KafkaVersion selects the version-dependent replay rules of Kafka's group coordinator.
// The zero value is not a valid version; use DefaultKafkaVersion or ParseKafkaVersion.
type KafkaVersion uint8

// The Kafka releases whose replay rules the model implements.
const (
	Kafka40 KafkaVersion = iota + 1
	Kafka41
	Kafka42
	Kafka43
	Kafka44
)

// DefaultKafkaVersion is the newest supported release.
const DefaultKafkaVersion = Kafka44

// KafkaVersions lists every supported version, oldest first.
var KafkaVersions = []KafkaVersion{Kafka40, Kafka41, Kafka42, Kafka43, Kafka44}

// ParseKafkaVersion parses "4.0" .. "4.4".
func ParseKafkaVersion(s string) (KafkaVersion, error) {
	for _, v := range KafkaVersions {
		if v.String() == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("groupstate: unsupported Kafka version %q (want one of 4.0, 4.1, 4.2, 4.3, 4.4)", s)
}

// String returns "4.0" .. "4.4".
func (v KafkaVersion) String() string {
	if v < Kafka40 || v > Kafka44 {
		return fmt.Sprintf("KafkaVersion(%d)", uint8(v))
	}
	return fmt.Sprintf("4.%d", uint8(v-Kafka40))
}

// Valid reports whether v is one of the supported versions.
func (v KafkaVersion) Valid() bool { return v >= Kafka40 && v <= Kafka44 }

// MarshalText renders the version as "4.x".
func (v KafkaVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses "4.x".
func (v *KafkaVersion) UnmarshalText(b []byte) error {
	p, err := ParseKafkaVersion(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// minor is the version's minor number (4.x), the unit of the schema's record table:
// KnowsRecordType and ReplaysRecordType are generated from it (zz_recordtypes.go).
func (v KafkaVersion) minor() int { return int(v - Kafka40) }

// Version-dependent rules, named after what they decide.

// initialEpoch is the group epoch and target assignment epoch of a group created
// implicitly during replay (0 up to 4.2, 1 from 4.3 on: KAFKA-20268).
func (v KafkaVersion) initialEpoch() int32 {
	if v >= Kafka43 {
		return 1
	}
	return 0
}

// initialValidatedTopologyEpoch is StreamsGroup's constructor value: the field is a fresh
// TimelineInteger (0) up to 4.3 and -1 from 4.4 on (KAFKA-20621).
func (v KafkaVersion) initialValidatedTopologyEpoch() int32 {
	if v >= Kafka44 {
		return -1
	}
	return 0
}

func (v KafkaVersion) hasAssignmentTimestamp() bool     { return v >= Kafka43 } // ids 6, 12, 20 tag 0; validation
func (v KafkaVersion) hasConsumerPartitionEpochs() bool { return v >= Kafka43 } // id 8 AssignmentEpochs
func (v KafkaVersion) hasStreamsTaskEpochs() bool       { return v >= Kafka42 } // id 22 AssignmentEpochs
func (v KafkaVersion) hasValidatedTopologyEpoch() bool  { return v >= Kafka42 } // id 17 tags 0 and 1
func (v KafkaVersion) hasDescriptionEpochs() bool       { return v >= Kafka44 } // id 17 tags 2 and 3
func (v KafkaVersion) hasMetadataHash() bool            { return v >= Kafka41 } // ids 3, 11
func (v KafkaVersion) hasOffsetTopicID() bool           { return v >= Kafka41 } // id 1 tag 0
func (v KafkaVersion) streamsReplacesSimpleGroup() bool { return v >= Kafka42 }
func (v KafkaVersion) storesSubscriptionMetadata() bool { return v == Kafka40 } // id 4 (and id 9)
func (v KafkaVersion) shareStrictLookup() bool          { return v == Kafka40 } // share tombstones need the group
