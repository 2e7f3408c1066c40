package edge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

// ErrNotFound is what Config, Templates and Secrets return for a missing key,
// whatever store is behind them.
var ErrNotFound = errors.New("not found")

// Config reads the config store.
type Config interface {
	Get(key string) (string, error)
}

// Templates reads page templates from the KV store.
type Templates interface {
	Get(name string) (string, error)
}

// Secrets reads the secret store.
type Secrets interface {
	Get(name string) ([]byte, error)
}

// The names of the service's stores and of the keys in them.
const (
	ConfigStore   = "waiting_room_config"
	TemplateStore = "waiting_room_templates"
	SecretStore   = "waiting_room_secrets"

	KeyRooms          = "rooms"
	KeyRoomPrefix     = "room."
	KeyAdminPath      = "admin_path"
	KeyUpstashURL     = "upstash_url" // optional where Upstash is a Fastly backend
	KeyStoreTimeoutMS = "store_timeout_ms"

	SecretUpstashToken  = "upstash_token"
	SecretSigningKeys   = "signing_keys"
	SecretAdminPassword = "admin_password"

	DefaultAdminPath    = "/_wr/admin"
	DefaultStoreTimeout = 1500 * time.Millisecond
)

// Settings is everything the config store says, read once per request
// (each request runs in a fresh instance).
type Settings struct {
	AdminPath string
	// UpstashURL is the config store's upstash_url, or "" when it has none
	// (then the upstash backend alone says where the database is).
	UpstashURL string
	// UpstashUnset, when set, says why upstash_url cannot be used: not a
	// URL, or a placeholder that was never replaced.
	UpstashUnset *SetupError
	// Unlinked, when set, says the config store cannot be opened at all, so
	// nothing can be decided and every request is refused.
	Unlinked     *SetupError
	StoreTimeout time.Duration
	// Rooms are the valid rooms, in the index's order.
	Rooms []*queue.Room
	// RoomsBroken is true when the room index or a room definition could
	// not be used. Such a room is left out of Rooms, and requests that no
	// valid room claims are then refused rather than sent to the origin,
	// because the broken room may have been meant to protect them.
	RoomsBroken bool
	// Problems lists everything that was wrong, for the log.
	Problems []error
}

// LoadSettings reads and validates the config store. Bad global values fall
// back to their defaults; every problem is returned for the log.
func LoadSettings(c Config) Settings {
	s := Settings{AdminPath: DefaultAdminPath, StoreTimeout: DefaultStoreTimeout}
	v, err := c.Get(KeyAdminPath)
	if errors.Is(err, ErrStoreNotLinked) {
		// Every other read would fail the same way: say it once.
		s.Unlinked, s.RoomsBroken = storeNotLinked(ConfigStore, "fastly config-store list"), true
		return s
	}
	if err == nil {
		if strings.HasPrefix(v, "/") && len(v) > 1 && !strings.ContainsAny(v, " ?#") {
			s.AdminPath = strings.TrimRight(v, "/")
		} else {
			s.Problems = append(s.Problems, fmt.Errorf("%s: %q must be a path like /_wr/admin; using %s", KeyAdminPath, v, DefaultAdminPath))
		}
	} else if !errors.Is(err, ErrNotFound) {
		s.Problems = append(s.Problems, fmt.Errorf("%s: %v", KeyAdminPath, err))
	}
	// upstash_url is optional; a bad one is a setup error, reported where
	// the store is needed rather than on every request.
	if v, err := c.Get(KeyUpstashURL); err == nil {
		s.UpstashURL, s.UpstashUnset = upstashURL(v)
	} else if !errors.Is(err, ErrNotFound) {
		s.Problems = append(s.Problems, fmt.Errorf("%s: %v", KeyUpstashURL, err))
	}
	if v, err := c.Get(KeyStoreTimeoutMS); err == nil {
		ms, perr := strconv.Atoi(v)
		if perr != nil || ms < 50 || ms > 30000 {
			s.Problems = append(s.Problems, fmt.Errorf("%s: %q must be a whole number of milliseconds from 50 to 30000; using %d", KeyStoreTimeoutMS, v, DefaultStoreTimeout.Milliseconds()))
		} else {
			s.StoreTimeout = time.Duration(ms) * time.Millisecond
		}
	}
	index, err := c.Get(KeyRooms)
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.Problems = append(s.Problems, fmt.Errorf("%s: %v", KeyRooms, err))
			s.RoomsBroken = true
		}
		return s
	}
	names, err := queue.ParseRoomIndex(index)
	if err != nil {
		s.Problems = append(s.Problems, err)
		s.RoomsBroken = true
		return s
	}
	for _, name := range names {
		raw, err := c.Get(KeyRoomPrefix + name)
		if err != nil {
			s.Problems = append(s.Problems, fmt.Errorf("%w: room %q: %s%s: %v", queue.ErrInvalidRoom, name, KeyRoomPrefix, name, err))
			s.RoomsBroken = true
			continue
		}
		r, err := queue.ParseRoom(name, []byte(raw))
		if err != nil {
			s.Problems = append(s.Problems, err)
			s.RoomsBroken = true
			continue
		}
		s.Rooms = append(s.Rooms, r)
	}
	return s
}
