// Invite codes: signed links into a room's priority lane.
//
// An invite is a token of the same HS256 shape as a pass, signed and
// verified by the same KeySet and claim reader (package passjwt), of its own kind
// (InviteKind) so that neither can stand for the other: Verify refuses an
// invite as a cookie, and ParseInvite refuses a pass as a link. It is
// not bound to a client: it is meant to be handed on, and the store counts
// its uses (store.Store.JoinPriority), so a leaked single-use link seats one
// visitor, not every holder.

package queue

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/golang-jwt/jwt/v5"
)

// Errors about invites, each wrapped with ErrBadInvite and a detail, so
// a caller tests either with errors.Is.
var (
	// ErrBadInvite wraps every reason an invite is refused.
	ErrBadInvite = errors.New("invite refused")
	// ErrInviteTampered: the code is not one this site signed (malformed,
	// altered, or its signature does not match).
	ErrInviteTampered = errors.New("not a code signed by this site")
	// ErrInviteUnknownKey: signed under a key id the key set does not
	// hold (a key rotated out, or another site's).
	ErrInviteUnknownKey = errors.New("signed with an unknown key")
	// ErrNotAnInvite: a pass of another kind (a cookie's), not an invite.
	ErrNotAnInvite = errors.New("not an invite")
	// ErrInviteMalformed: signed, but not a well-formed invite (no room,
	// an odd id, a lifetime out of bounds).
	ErrInviteMalformed = errors.New("not a well-formed invite")
	// ErrInviteExpired: the invite's time is over.
	ErrInviteExpired = errors.New("expired")
	// ErrInviteNotYetValid: the invite's time has not come.
	ErrInviteNotYetValid = errors.New("not valid yet")
	// ErrInviteWrongRoom: the invite is for another room.
	ErrInviteWrongRoom = errors.New("for another room")
	// ErrInviteUses: the number of uses is out of range.
	ErrInviteUses = errors.New("uses out of range")
	// ErrInvitePath: the path the invite sends to is not in normal form,
	// or not in the room's line.
	ErrInvitePath = errors.New("bad target path")
	// ErrInviteSpent: every use of the invite was taken (Gate.Invited).
	ErrInviteSpent = errors.New("used up")
	// ErrNoPriorityLane: the room takes no invites (priority_share 0).
	ErrNoPriorityLane = errors.New("the room has no priority lane")
)

// Bounds on invites.
const (
	// MaxInviteCode is the longest code ParseInvite reads; a minted one
	// is under 600 bytes with the longest path.
	MaxInviteCode = 2048
	// MaxInvitePath bounds the path an invite sends its holder to.
	MaxInvitePath = 256
	// MaxInviteTTL is the longest an invite may last: the store keeps
	// its count of uses until it expires.
	MaxInviteTTL = 366 * 24 * time.Hour
	// MaxInviteUses is the most visitors one invite may seat, as the
	// store counts them.
	MaxInviteUses = store.MaxInviteUses
	// maxInviteID bounds an invite's id, as the store does.
	maxInviteID = 128
)

// Invite is an invitation to a room's priority lane: up to Uses visitors
// who follow its link between NotBefore and Expires get a place in Room's
// priority lane and are sent to To.
type Invite struct {
	// ID names the invite; the store counts its uses under it.
	ID string
	// Room is the room whose priority lane it opens.
	Room string
	// Uses is how many tickets it may hand out (1 to MaxInviteUses).
	Uses int
	// To is the path its holder is sent to: in normal form (escaped as
	// urlnorm writes it), no query, inside the room's line.
	To string
	// NotBefore is when it becomes valid (zero: when issued); Expires
	// when it stops being.
	IssuedAt, NotBefore, Expires time.Time
}

// NewInviteID names a new invite with 128 random bits.
func NewInviteID() (string, error) { return newID() }

// invalid wraps why with ErrBadInvite and the detail.
func invalid(why error, format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrBadInvite, why, fmt.Sprintf(format, args...))
}

// check refuses an invite that no minting should sign and no edge accept,
// whatever its room's settings.
func (inv Invite) check() error {
	if err := checkName(inv.Room); err != nil {
		return invalid(ErrInviteMalformed, "room %q %v", inv.Room, err)
	}
	if inv.Uses < 1 || inv.Uses > MaxInviteUses {
		return invalid(ErrInviteUses, "%d uses, must be 1 to %d", inv.Uses, MaxInviteUses)
	}
	if len(inv.ID) < 1 || len(inv.ID) > maxInviteID || strings.Trim(inv.ID, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return invalid(ErrInviteMalformed, "id %q must be 1 to %d of A-Z, a-z, 0-9, - and _", inv.ID, maxInviteID)
	}
	from := inv.IssuedAt
	if inv.NotBefore.After(from) {
		from = inv.NotBefore
	}
	if !inv.Expires.After(from) || inv.Expires.Sub(inv.IssuedAt) > MaxInviteTTL {
		return invalid(ErrInviteMalformed, "valid from %s to %s: must end after it starts, at most %v after it is issued",
			from.UTC().Format(time.RFC3339), inv.Expires.UTC().Format(time.RFC3339), MaxInviteTTL)
	}
	if _, err := invitePath(inv.To); err != nil {
		return err
	}
	return nil
}

// invitePath reads an invite's target path, refusing one that is not its
// own normal form or that origins read differently (an encoded slash...):
// the edge sends the visitor to exactly this path, so it must be one the
// room judges as the origin serves it, and never another site ("//evil"
// is not in normal form).
func invitePath(to string) (urlnorm.Path, error) {
	if len(to) > MaxInvitePath {
		return urlnorm.Path{}, invalid(ErrInvitePath, "%d bytes, at most %d", len(to), MaxInvitePath)
	}
	p, err := urlnorm.ParsePath(to)
	switch {
	case err != nil || to == "":
		return p, invalid(ErrInvitePath, "%q is not a path (%v)", to, err)
	case p.Escaped != to:
		return p, invalid(ErrInvitePath, "%q is not in normal form: write %q", to, p.Escaped)
	case p.Ambiguous != "":
		return p, invalid(ErrInvitePath, "%q %s", to, p.Ambiguous)
	}
	return p, nil
}

// CheckRoom refuses the invite for room: another room's, or sending its
// holder to a path outside room's line (not under its paths, or bypassed),
// where a priority ticket would be worth nothing.
func (inv Invite) CheckRoom(room *Room) error {
	if inv.Room != room.Name {
		return invalid(ErrInviteWrongRoom, "invite for room %q, not %q", inv.Room, room.Name)
	}
	p, err := invitePath(inv.To)
	if err != nil {
		return err
	}
	if !room.Target.HoldsPath(p.Literal) || room.Bypass.SkipsPath(p.Literal) {
		return invalid(ErrInvitePath, "%q is not in room %q's line", inv.To, room.Name)
	}
	return nil
}

// MintInvite signs inv as a code for a link (see ParseInvite). It refuses
// what ParseInvite would refuse whatever the room: a bad room name, uses
// out of range, an id the store cannot count under, a lifetime that ends
// before it starts or lasts longer than MaxInviteTTL, a path not in normal
// form.
func (ks *KeySet) MintInvite(inv Invite) (string, error) {
	if err := inv.check(); err != nil {
		return "", err
	}
	return ks.Sign(Pass{Kind: InviteKind, Room: inv.Room, Uses: int64(inv.Uses), To: inv.To, ID: inv.ID,
		NotBefore: inv.NotBefore, IssuedAt: inv.IssuedAt, Expires: inv.Expires})
}

// ParseInvite verifies an invite code at now, for whichever room it
// names (Invite.Room; CheckRoom checks it against the room). Header and
// signature are checked first (see KeySet.Verify), so a forged code costs
// an HMAC and nothing else. Its times are exact: an invite expired a
// second ago is expired.
func (ks *KeySet) ParseInvite(code string, now time.Time) (Invite, error) {
	if len(code) > MaxInviteCode {
		return Invite{}, invalid(ErrInviteTampered, "%d bytes, longer than any code", len(code))
	}
	p, err := ks.verify("", code, now)
	switch {
	case err == nil:
	case errors.Is(err, errNoKeys):
		return Invite{}, err
	case errors.Is(err, errUnknownKey):
		return Invite{}, invalid(ErrInviteUnknownKey, "%v", err)
	case errors.Is(err, jwt.ErrTokenExpired):
		return Invite{}, invalid(ErrInviteExpired, "%v", err)
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return Invite{}, invalid(ErrInviteNotYetValid, "%v", err)
	default:
		return Invite{}, invalid(ErrInviteTampered, "%v", err)
	}
	if p.Kind != InviteKind {
		return Invite{}, invalid(ErrNotAnInvite, "a %q pass", p.Kind)
	}
	if p.Uses < 1 || p.Uses > MaxInviteUses {
		return Invite{}, invalid(ErrInviteUses, "%d uses, must be 1 to %d", p.Uses, MaxInviteUses)
	}
	inv := Invite{ID: p.ID, Room: p.Room, Uses: int(p.Uses), To: p.To, IssuedAt: p.IssuedAt.UTC(), Expires: p.Expires.UTC()}
	if !p.NotBefore.IsZero() {
		inv.NotBefore = p.NotBefore.UTC()
	}
	if err := inv.check(); err != nil {
		return Invite{}, err
	}
	switch {
	case !now.Before(inv.Expires):
		return Invite{}, invalid(ErrInviteExpired, "expired at %s", inv.Expires.UTC().Format(time.RFC3339))
	case now.Before(inv.NotBefore):
		return Invite{}, invalid(ErrInviteNotYetValid, "valid from %s", inv.NotBefore.UTC().Format(time.RFC3339))
	}
	return inv, nil
}
