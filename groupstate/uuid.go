package groupstate

import (
	"bytes"
	"encoding/base64"
	"fmt"
)

// Uuid is a Kafka UUID (a topic id): 16 bytes, most significant long first.
type Uuid [16]byte

// ZeroUuid is Kafka's Uuid.ZERO_UUID, the default of an absent topic id.
var ZeroUuid Uuid

// String renders the id as Kafka's Uuid.toString does: unpadded base64url (22 characters).
func (u Uuid) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// IsZero reports whether u is the all-zero UUID.
func (u Uuid) IsZero() bool { return u == ZeroUuid }

// Compare orders UUIDs bytewise.
func (u Uuid) Compare(o Uuid) int { return bytes.Compare(u[:], o[:]) }

// MarshalText renders the id as Kafka does (unpadded base64url).
func (u Uuid) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText parses Kafka's unpadded base64url form.
func (u *Uuid) UnmarshalText(b []byte) error {
	d, err := base64.RawURLEncoding.DecodeString(string(b))
	if err != nil || len(d) != 16 {
		return fmt.Errorf("groupstate: invalid uuid %q", b)
	}
	copy(u[:], d)
	return nil
}
