package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/draw"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-key", "k3y", "-first", "5", "-last", "9"}, &out); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("k3y"))
	order, _ := draw.Order("k3y", 5, 9)
	want := "commitment " + hex.EncodeToString(sum[:]) + "\n"
	for i, tk := range order {
		want += fmt.Sprintf("%d\t%d\n", i+1, tk)
	}
	if out.String() != want {
		t.Fatalf("printed\n%s\nwant\n%s", out.String(), want)
	}
	for _, args := range [][]string{{"-first", "1", "-last", "2"}, {"-key", "k", "-first", "0", "-last", "2"}, {"-key", "k", "-first", "3", "-last", "1"}, {"-nope"}} {
		if err := run(args, &bytes.Buffer{}); err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%q: no error", args)
		}
	}
}
