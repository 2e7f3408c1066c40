package queue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/store"
)

// CommandHeader is the response header through which the origin steers
// its room: "revoke" ends the visitor's session, "admit=N" calls in N more
// visitors. Commands may be combined, comma-separated. The edge strips the
// header before the response reaches the visitor.
const CommandHeader = "Waiting-Room-Command"

// MaxOriginAdmit bounds one admit=N from the origin: what one store call
// may call in, so an origin's command never stalls the database.
const MaxOriginAdmit = store.MaxCallsPerOp

// Commands is what the origin asked for in one response.
type Commands struct {
	Revoke bool
	Admit  int64
}

// ParseCommands reads the values of CommandHeader. Unknown or malformed
// commands are returned as errors, for the log, and otherwise ignored.
func ParseCommands(values []string) (Commands, []error) {
	var c Commands
	var errs []error
	for _, v := range values {
		for _, cmd := range strings.Split(v, ",") {
			cmd = strings.ToLower(strings.TrimSpace(cmd))
			switch {
			case cmd == "":
			case cmd == "revoke":
				c.Revoke = true
			case strings.HasPrefix(cmd, "admit="):
				n, err := strconv.ParseInt(strings.TrimPrefix(cmd, "admit="), 10, 64)
				if err != nil || n < 1 || n > MaxOriginAdmit {
					errs = append(errs, fmt.Errorf("%s: %q: N must be a whole number from 1 to %d", CommandHeader, cmd, MaxOriginAdmit))
					continue
				}
				c.Admit += n
			default:
				errs = append(errs, fmt.Errorf("%s: unknown command %q", CommandHeader, cmd))
			}
		}
	}
	if c.Admit > MaxOriginAdmit {
		c.Admit = MaxOriginAdmit
	}
	return c, errs
}
