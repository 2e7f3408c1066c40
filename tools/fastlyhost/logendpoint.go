package fastlyhost

import (
	"bytes"
	"strings"
)

// reservedEndpoint reports whether a guest may not open a log endpoint of
// this name: Viceroy refuses stdout, stderr and any name beginning
// fst_managed_, in any case, with InvalidArgument (is_reserved_endpoint in
// its src/wiggle_abi/log_impl.rs).
func reservedEndpoint(name []byte) bool {
	n := strings.ToLower(string(name))
	return n == "stdout" || n == "stderr" || strings.HasPrefix(n, "fst_managed_")
}

// endpointSeparator is what Viceroy writes between an endpoint's name and
// each entry.
const endpointSeparator = " :: "

// writeEntry writes one entry of the log endpoint name to
// Options.LogEndpoints as Viceroy's LogEndpoint::write_entry does (its
// src/logging.rs): one trailing newline is dropped, an entry left empty is
// dropped, every other newline is written as the two characters \n, and
// the line is "name :: entry", written at once so that entries from
// instances running together never interleave.
func (h *Host) writeEntry(name string, msg []byte) {
	msg = bytes.TrimSuffix(msg, []byte("\n"))
	if len(msg) == 0 {
		return
	}
	line := make([]byte, 0, len(name)+len(endpointSeparator)+len(msg)+bytes.Count(msg, []byte("\n"))+1)
	line = append(line, name...)
	line = append(line, endpointSeparator...)
	for _, c := range msg {
		if c == '\n' {
			line = append(line, '\\', 'n')
		} else {
			line = append(line, c)
		}
	}
	line = append(line, '\n')
	h.endpointsMu.Lock()
	_, err := h.endpoints.Write(line)
	h.endpointsMu.Unlock()
	if err != nil {
		// The guest's write succeeds all the same: Viceroy's does.
		h.logf("log endpoint %s: %v", name, err)
	}
}
