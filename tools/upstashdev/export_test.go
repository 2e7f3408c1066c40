package upstashdev_test

import (
	"crypto/sha1"
	"encoding/hex"
)

func sha(src string) string {
	s := sha1.Sum([]byte(src))
	return hex.EncodeToString(s[:])
}
