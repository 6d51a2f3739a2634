package recordcodec

import (
	"encoding/binary"
	"unsafe"
)

// decodeFast decodes the common shapes of an OffsetCommitValue (any version, at most the one
// known tag) straight from b, without the general reader. It reports false for anything else,
// including every malformed input, and leaves s untouched then: the general path decodes it
// and names the problem. Offset commits are most of any real log, so replay leans on this.
func (s *OffsetCommitValue) decodeFast(b []byte, alias bool) bool {
	if len(b) < 2+8+2+8 {
		return false
	}
	ver := int16(binary.BigEndian.Uint16(b))
	if ver < 0 || ver > 4 {
		return false
	}
	p := 2
	offset := int64(binary.BigEndian.Uint64(b[p:]))
	p += 8
	leaderEpoch := int32(-1)
	if ver >= 3 {
		if len(b)-p < 4 {
			return false
		}
		leaderEpoch = int32(binary.BigEndian.Uint32(b[p:]))
		p += 4
	}
	var n int
	if ver >= 4 {
		// A compact string whose length fits one varint byte.
		if len(b)-p < 1 || b[p] == 0 || b[p] >= 0x80 {
			return false
		}
		n = int(b[p]) - 1
		p++
	} else {
		if len(b)-p < 2 {
			return false
		}
		n = int(int16(binary.BigEndian.Uint16(b[p:])))
		p += 2
		if n < 0 {
			return false
		}
	}
	if len(b)-p < n+8 {
		return false
	}
	var metadata string
	if n > 0 {
		if alias {
			metadata = unsafe.String(&b[p], n)
		} else {
			metadata = string(b[p : p+n])
		}
	}
	p += n
	commitTimestamp := int64(binary.BigEndian.Uint64(b[p:]))
	p += 8
	expireTimestamp := int64(-1)
	if ver == 1 {
		if len(b)-p < 8 {
			return false
		}
		expireTimestamp = int64(binary.BigEndian.Uint64(b[p:]))
		p += 8
	}
	var topicID UUID
	var present uint64
	if ver >= 4 {
		if len(b)-p < 1 {
			return false
		}
		switch b[p] {
		case 0:
			p++
		case 1: // exactly tag 0, 16 bytes: the topic id
			if len(b)-p < 3+16 || b[p+1] != 0 || b[p+2] != 16 {
				return false
			}
			copy(topicID[:], b[p+3:])
			p += 3 + 16
			present = 1
		default:
			return false
		}
	}
	if p != len(b) {
		return false
	}
	*s = OffsetCommitValue{Version: ver, Offset: offset, LeaderEpoch: leaderEpoch, Metadata: metadata,
		CommitTimestamp: commitTimestamp, ExpireTimestamp: expireTimestamp, TopicId: topicID, presentTags: present}
	return true
}
