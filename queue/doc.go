// Package queue is the waiting room's domain: rooms and their settings, the
// signed passes visitors carry, and the decision taken on each request.
//
// A room works like the ticket line at a shop counter. Every new visitor
// draws the next number (the store's "issued" counter) and the room calls
// numbers in order (its "admitted" counter, "now serving"). A visitor whose
// number has been called may enter; FIFO order follows from the numbers
// alone, so the shared state is two counters per room, not a list of people.
//
// The visitor's number travels in a signed cookie (a [Pass]). Once called,
// the ticket is exchanged for a session pass, and while that session is
// valid the visitor's requests need no store call at all. Only joining the
// line and polling a place in it touch the store, once per request.
//
// Nothing here imports the Fastly SDK: the edge package turns requests into
// the facts a [Gate] needs and carries out its [Decision].
package queue
