// Package resp is a small Redis client speaking RESP2: enough to carry
// arbitrary commands to a redis-server and return its replies with their
// types intact (status, error, integer, bulk, nil, array), which is what a
// faithful Upstash REST stand-in has to translate.
package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Kind is the type of a reply.
type Kind int

// Reply kinds, as RESP2 has them.
const (
	Status Kind = iota + 1
	Error
	Int
	Bulk
	Nil
	Array
)

// Value is one reply.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Array []Value
}

// Conn is one connection to Redis. It is not safe for concurrent use.
type Conn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// Dial connects to a Redis server at addr.
func Dial(addr string, timeout time.Duration) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Send writes a command without waiting for its reply.
func (c *Conn) Send(args ...string) error {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n", len(a))
		c.w.WriteString(a)
		c.w.WriteString("\r\n")
	}
	return c.w.Flush()
}

// Receive reads one reply. A Redis error reply is a Value of Kind Error,
// not a Go error: Go errors mean the connection failed.
func (c *Conn) Receive() (Value, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return Value{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return Value{}, errors.New("resp: malformed line")
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return Value{Kind: Status, Str: body}, nil
	case '-':
		return Value{Kind: Error, Str: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return Value{Kind: Int, Int: n}, err
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Value{}, err
		}
		if n < 0 {
			return Value{Kind: Nil}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return Value{}, err
		}
		return Value{Kind: Bulk, Str: string(buf[:n])}, nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return Value{}, err
		}
		if n < 0 {
			return Value{Kind: Nil}, nil
		}
		v := Value{Kind: Array, Array: make([]Value, n)}
		for i := range v.Array {
			if v.Array[i], err = c.Receive(); err != nil {
				return Value{}, err
			}
		}
		return v, nil
	}
	return Value{}, fmt.Errorf("resp: unknown reply type %q", line[0])
}

// Do sends a command and reads its reply.
func (c *Conn) Do(args ...string) (Value, error) {
	if err := c.Send(args...); err != nil {
		return Value{}, err
	}
	return c.Receive()
}

// Pool keeps idle connections to one server for reuse.
type Pool struct {
	Addr string
	idle chan *Conn
}

// NewPool returns a pool that keeps up to size idle connections.
func NewPool(addr string, size int) *Pool {
	return &Pool{Addr: addr, idle: make(chan *Conn, size)}
}

// Get returns an idle connection or dials a new one.
func (p *Pool) Get() (*Conn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
		return Dial(p.Addr, 2*time.Second)
	}
}

// Put returns a healthy connection to the pool; pass broken ones to Close.
func (p *Pool) Put(c *Conn) {
	select {
	case p.idle <- c:
	default:
		c.Close()
	}
}

// Do runs one command on a pooled connection.
func (p *Pool) Do(args ...string) (Value, error) {
	c, err := p.Get()
	if err != nil {
		return Value{}, err
	}
	v, err := c.Do(args...)
	if err != nil {
		c.Close()
		return Value{}, err
	}
	p.Put(c)
	return v, nil
}
