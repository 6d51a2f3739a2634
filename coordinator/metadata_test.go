package coordinator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/coordlog/coordlog/recordcodec"
)

// TestMetadataHashIsKafkas: the group metadata hash equals what a Kafka 4.4.0 broker wrote in
// fixtures/real/consumer (ConsumerGroupMetadataValue of group consumer-848, subscribed to
// s2-in: 6 partitions, topic id KBRHv04FSnKzpnPI8cJpSw, no racks). Consumer and streams groups
// share Kafka's Utils.computeGroupHash.
func TestMetadataHashIsKafkas(t *testing.T) {
	id, err := recordcodec.ParseUUID("KBRHv04FSnKzpnPI8cJpSw")
	require.NoError(t, err)
	md := &Metadata{Topics: map[string]TopicMetadata{"s2-in": {ID: id, Partitions: 6}}}
	require.Equal(t, int64(4388309904112012656), GroupHash([]string{"s2-in"}, md))
	require.Equal(t, int64(0), GroupHash([]string{"missing"}, md))
	require.Equal(t, int64(0), GroupHash(nil, md))
}
