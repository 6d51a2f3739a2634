package coordinator

import "fmt"

// Kafka error codes the streams coordinator answers with (Errors.java).
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
	ErrStreamsInvalidTopology  int16 = 130
	ErrStreamsInvalidTopoEpoch int16 = 131
	ErrStreamsTopologyFenced   int16 = 132
)

// apiError is an error answered to the client; every record the operation prepared is
// discarded (Kafka aborts the whole write operation).
type apiError struct {
	code int16
	msg  string
}

func (e *apiError) Error() string { return fmt.Sprintf("error %d: %s", e.code, e.msg) }

func errf(code int16, format string, args ...any) *apiError {
	// UNKNOWN_SERVER_ERROR messages are stripped by Kafka's runtime.
	if code == ErrUnknownServerError {
		return &apiError{code: code}
	}
	return &apiError{code: code, msg: fmt.Sprintf(format, args...)}
}
