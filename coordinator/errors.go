package coordinator

import "fmt"

// Kafka error codes that coordlog's group coordinators answer with (Errors.java). Codes only
// one protocol uses live with that protocol's coordinator.
const (
	ErrNone                    int16 = 0
	ErrUnknownServerError      int16 = -1
	ErrCoordinatorNotAvailable int16 = 15
	ErrInvalidGroupID          int16 = 24
	ErrUnknownMemberID         int16 = 25
	ErrUnsupportedVersion      int16 = 35
	ErrInvalidRequest          int16 = 42
	ErrGroupIDNotFound         int16 = 69
	ErrGroupMaxSizeReached     int16 = 81
	ErrFencedInstanceID        int16 = 82
	ErrFencedMemberEpoch       int16 = 110
	ErrUnreleasedInstanceID    int16 = 111
	ErrUnknownTopicOrPartition int16 = 3
	ErrIllegalGeneration       int16 = 22
	ErrInconsistentGroupProto  int16 = 23
	ErrRebalanceInProgress     int16 = 27
	ErrNonEmptyGroup           int16 = 68
	ErrInvalidSessionTimeout   int16 = 26
	ErrMemberIDRequired        int16 = 79
	ErrGroupSubscribedToTopic  int16 = 86
	ErrUnsupportedAssignor     int16 = 112
	ErrStaleMemberEpoch        int16 = 113
	ErrInvalidRegularExpr      int16 = 128
)

// Error is an error answered to the client. A decision that fails discards every record it
// prepared: Kafka aborts the whole write operation.
type Error struct {
	Code    int16
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// Errorf returns the error answered with code. UNKNOWN_SERVER_ERROR carries no message,
// because Kafka's runtime strips it.
func Errorf(code int16, format string, args ...any) *Error {
	if code == ErrUnknownServerError {
		return &Error{Code: code}
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
