package streams

// Kafka error codes that only streams groups answer with (Errors.java); the shared ones are
// in package coordinator.
const (
	ErrStreamsInvalidTopology  int16 = 130
	ErrStreamsInvalidTopoEpoch int16 = 131
	ErrStreamsTopologyFenced   int16 = 132
)
