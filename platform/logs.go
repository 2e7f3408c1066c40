package platform

import (
	"github.com/edgequeue/waitingroom/edge"
	"github.com/fastly/compute-sdk-go/rtlog"
)

// logEndpoint is a Fastly real-time log endpoint. Opening one cannot fail
// by itself: an unknown or reserved name fails each Write.
type logEndpoint struct{ e *rtlog.Endpoint }

func openLogEndpoint(name string) edge.LogEndpoint { return logEndpoint{rtlog.Open(name)} }

func (l logEndpoint) Write(line []byte) error {
	_, err := l.e.Write(line)
	return err
}
