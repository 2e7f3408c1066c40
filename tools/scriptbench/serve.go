package scriptbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// Two scripts are compared fairly when their passes take turns: the
// other work on a shared machine then weighs on both alike. Each script is
// a process of its own (the harness built against its tree), which Serve
// runs and Proc drives.

// Reply is one answer of Serve, one JSON line: the first, before any
// request, names the Redis and the configuration; Turn says a pass waits
// to measure its next round; a finished pass's carries its measurements.
type Reply struct {
	Error string `json:",omitempty"`
	Redis string `json:",omitempty"`
	// RedisPID is the redis-server's process (the first answer).
	RedisPID int     `json:",omitempty"`
	Config   *Config `json:",omitempty"`
	Turn     bool    `json:",omitempty"`
	Line     *Line   `json:",omitempty"`
}

// Serve starts a redis-server for cfg and answers the requests read from
// r, one a line, on w: "fill N" fills a fresh line of N waiting; "pass"
// begins a pass on it, which waits (Turn) before each round it measures
// until a "step" lets it run that round, and answers with its Line after
// the last. It returns at the end of r.
func Serve(ctx context.Context, cfg Config, r io.Reader, w io.Writer) error {
	enc := json.NewEncoder(w)
	b, err := Start(cfg)
	if err != nil {
		enc.Encode(Reply{Error: err.Error()})
		return err
	}
	defer b.Close()
	if err := enc.Encode(Reply{Redis: b.Redis, RedisPID: b.RedisPID, Config: &cfg}); err != nil {
		return err
	}
	// While a pass runs, its goroutine answers through replies: a turn, or
	// its end; steps lets it run a round.
	var steps chan struct{}
	replies := make(chan Reply)
	b.turn = func() {
		replies <- Reply{Turn: true}
		<-steps
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rep Reply
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "step" && steps != nil:
			steps <- struct{}{}
			if rep = <-replies; !rep.Turn {
				steps = nil
			}
		case steps != nil:
			rep.Error = fmt.Sprintf("request %q while a pass runs: want \"step\"", sc.Text())
		case len(f) == 2 && f[0] == "fill":
			n, err := strconv.Atoi(f[1])
			if err == nil {
				err = b.Fill(ctx, n)
			}
			if err != nil {
				rep.Error = "fill " + f[1] + ": " + err.Error()
			}
		case len(f) == 1 && f[0] == "pass":
			steps = make(chan struct{})
			go func() {
				l, err := b.Pass(ctx)
				if err != nil {
					replies <- Reply{Error: "pass: " + err.Error()}
					return
				}
				replies <- Reply{Line: &l}
			}()
			if rep = <-replies; !rep.Turn {
				steps = nil
			}
		default:
			rep.Error = fmt.Sprintf("request %q: want \"fill N\", \"pass\" or \"step\"", sc.Text())
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Proc is a harness serving in another process (cmd/scriptbench -serve).
type Proc struct {
	// Redis, RedisPID and Config are what it said first.
	Redis    string
	RedisPID int
	Config   Config
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *bufio.Scanner
}

// StartProc runs the harness at path with -serve and args; its log goes
// to this process's standard error.
func StartProc(path string, args ...string) (*Proc, error) {
	cmd := exec.Command(path, append([]string{"-serve"}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(nil, 16<<20)
	rep, err := p.read()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.Config == nil {
		p.Close()
		return nil, fmt.Errorf("%s: its first answer names no configuration", path)
	}
	p.Redis, p.RedisPID, p.Config = rep.Redis, rep.RedisPID, *rep.Config
	return p, nil
}

// Fill has it fill a fresh line of n.
func (p *Proc) Fill(n int) error {
	_, err := p.ask("fill " + strconv.Itoa(n))
	return err
}

// Begin has it begin a pass on its line, which waits for Step.
func (p *Proc) Begin() error {
	rep, err := p.ask("pass")
	if err == nil && !rep.Turn {
		err = errors.New("a pass began without waiting for its turn")
	}
	return err
}

// Step lets its pass measure one round: the pass's Line when that was its
// last, else nil.
func (p *Proc) Step() (*Line, error) {
	rep, err := p.ask("step")
	if err != nil {
		return nil, err
	}
	if !rep.Turn && rep.Line == nil {
		return nil, errors.New("a step answered neither a turn nor the pass's measurements")
	}
	return rep.Line, nil
}

// Close ends it and waits for it to exit.
func (p *Proc) Close() error {
	p.in.Close()
	return p.cmd.Wait()
}

func (p *Proc) ask(req string) (Reply, error) {
	if _, err := fmt.Fprintln(p.in, req); err != nil {
		return Reply{}, err
	}
	return p.read()
}

func (p *Proc) read() (Reply, error) {
	if !p.out.Scan() {
		if err := p.out.Err(); err != nil {
			return Reply{}, err
		}
		return Reply{}, errors.New("it exited without an answer")
	}
	var rep Reply
	if err := json.Unmarshal(p.out.Bytes(), &rep); err != nil {
		return Reply{}, fmt.Errorf("its answer %.100q: %w", p.out.Text(), err)
	}
	if rep.Error != "" {
		return rep, errors.New(rep.Error)
	}
	return rep, nil
}
