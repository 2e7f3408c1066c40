package queue

import (
	"strings"
	"testing"
)

func TestCheckKeyID(t *testing.T) {
	for id, ok := range map[string]bool{
		"k1": true, "2024-06.rot_A": true, strings.Repeat("k", 32): true,
		"": false, strings.Repeat("k", 33): false, "\xc3": false, "ké": false, "k 1": false,
		"k:1": false, `k"1`: false, "k\\1": false, "k\n": false, "k/1": false, "k,1": false,
	} {
		if err := CheckKeyID(id); (err == nil) != ok {
			t.Errorf("CheckKeyID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}
