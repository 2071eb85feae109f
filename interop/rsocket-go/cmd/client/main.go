// rsocket-go v0.8.16 performing the client test cases of interop/testcases.json.
// Usage: RSIO_URL=tcp://127.0.0.1:PORT RSIO_TESTCASE=NAME client
// Prints one line per signal ("next TEXT", "complete", "error TEXT"); exits 0 when the test case went as
// expected, 1 when not, 127 for a test case it does not support.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/rsocket/rsocket-go"
	"github.com/rsocket/rsocket-go/core"
	"github.com/rsocket/rsocket-go/payload"
	"github.com/rsocket/rsocket-go/rx"
	"github.com/rsocket/rsocket-go/rx/flux"
)

const timeout = 10 * time.Second // for a whole test case

func show(data []byte) string {
	if len(data) > 64 {
		return fmt.Sprintf("next %d bytes", len(data))
	}
	return "next " + string(data)
}

func largeCheck(index int, data []byte) string {
	good := "ok"
	for j, b := range data {
		if b != byte((index+j)%256) {
			good = "BAD"
		}
	}
	return fmt.Sprintf("next %d bytes %s", len(data), good)
}

// consume subscribes: requests initial, then batch more after each batch elements; cancels after take.
func consume(ctx context.Context, f flux.Flux, initial, batch, take int, check bool) []string {
	var lines []string
	var subscription rx.Subscription
	count := 0
	done := make(chan struct{})
	f.Subscribe(ctx,
		rx.OnSubscribe(func(ctx context.Context, s rx.Subscription) { subscription = s; s.Request(initial) }),
		rx.OnNext(func(p payload.Payload) error {
			if check {
				lines = append(lines, largeCheck(count, p.Data()))
			} else {
				lines = append(lines, show(p.Data()))
			}
			count++
			if take > 0 && count == take {
				subscription.Cancel()
				close(done)
			} else if batch > 0 && count%batch == 0 {
				subscription.Request(batch)
			}
			return nil
		}),
		rx.OnComplete(func() { lines = append(lines, "complete"); close(done) }),
		rx.OnError(func(e error) { lines = append(lines, "error "+message(e)); close(done) }))
	select {
	case <-done:
	case <-ctx.Done():
		return append(lines, "timeout")
	}
	if take > 0 {
		time.Sleep(500 * time.Millisecond) // elements after the cancel would show up here (the kit judges them)
	}
	return lines
}

// message is the data of an RSocket ERROR frame (rsocket-go's Error() prefixes the error code).
func message(e error) string {
	var custom core.CustomError
	if errors.As(e, &custom) {
		return string(custom.ErrorData())
	}
	return e.Error()
}

func response(ctx context.Context, c rsocket.Client, name string) []string {
	p, err := c.RequestResponse(payload.NewString(name, "")).Block(ctx)
	if err != nil {
		return []string{"error " + message(err)}
	}
	return []string{show(p.Data())}
}

// countOf asks tck/fnf-count?key=interop until it answers want, at most 10 times, 0.2 s apart: a responder
// may handle fire-and-forgets asynchronously, and nothing acknowledges them (interop/testcases.json).
func countOf(ctx context.Context, c rsocket.Client, want string) []string {
	lines := response(ctx, c, "tck/fnf-count?key=interop")
	for try := 1; try < 10 && lines[0] != want && ctx.Err() == nil; try++ {
		time.Sleep(200 * time.Millisecond) // the poll's interval: the count changes on the server, unannounced
		lines = response(ctx, c, "tck/fnf-count?key=interop")
	}
	return lines
}

func str(text string) payload.Payload { return payload.New([]byte(text), nil) }

type testcase struct {
	perform  func(context.Context, rsocket.Client) []string
	expected []string
}

func numbered(n int, more ...string) []string {
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, "next "+strconv.Itoa(i))
	}
	return append(lines, more...)
}

var testcases = map[string]testcase{
	"stream-range": {func(ctx context.Context, c rsocket.Client) []string {
		return consume(ctx, c.RequestStream(str("tck/range?count=10")), 3, 3, 0, false)
	}, numbered(10, "complete")},
	"request-response": {func(ctx context.Context, c rsocket.Client) []string {
		return response(ctx, c, "tck/range?start=7&count=1")
	}, []string{"next 7"}},
	"fnf": {func(ctx context.Context, c rsocket.Client) []string {
		for i := 0; i < 3; i++ {
			c.FireAndForget(str("tck/fnf?key=interop"))
		}
		return countOf(ctx, c, "next 3")
	}, []string{"next 3"}},
	"channel-echo": {func(ctx context.Context, c rsocket.Client) []string {
		out := flux.Just(str("tck/echo"), str("a"), str("b"), str("c"))
		return consume(ctx, c.RequestChannel(out), 1, 1, 0, false)
	}, []string{"next a", "next b", "next c", "complete"}},
	"cancel-infinite": {func(ctx context.Context, c rsocket.Client) []string {
		return consume(ctx, c.RequestStream(str("tck/infinite")), 5, 0, 5, false)
	}, numbered(5)},
	"large-fragmented": {func(ctx context.Context, c rsocket.Client) []string {
		return consume(ctx, c.RequestStream(str("tck/large?size=100000&count=3")), 3, 0, 0, true)
	}, []string{"next 100000 bytes ok", "next 100000 bytes ok", "next 100000 bytes ok", "complete"}},
	"error": {func(ctx context.Context, c rsocket.Client) []string {
		return consume(ctx, c.RequestStream(str("tck/error?after=2")), 10, 0, 0, false)
	}, []string{"next 0", "next 1", "error failed"}},
	"keepalive": {func(ctx context.Context, c rsocket.Client) []string { // idle past the max lifetime (main)
		time.Sleep(2500 * time.Millisecond) // the test: keepalives alone keep the connection
		return response(ctx, c, "tck/range?start=7&count=1")
	}, []string{"next 7"}},
	"metadata-push": {func(ctx context.Context, c rsocket.Client) []string {
		c.MetadataPush(payload.New(nil, []byte("tck")))
		return response(ctx, c, "tck/range?count=1")
	}, []string{"next 0"}},
}

func main() {
	tc, ok := testcases[os.Getenv("RSIO_TESTCASE")]
	if !ok {
		fmt.Fprintf(os.Stderr, "unsupported test case '%s'\n", os.Getenv("RSIO_TESTCASE"))
		os.Exit(127)
	}
	target, err := url.Parse(os.Getenv("RSIO_URL"))
	if err != nil {
		fmt.Println("error bad RSIO_URL:", err)
		os.Exit(1)
	}
	port, _ := strconv.Atoi(target.Port())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick, lifetime := 30*time.Second, 90*time.Second
	if os.Getenv("RSIO_TESTCASE") == "keepalive" { // keepalive: every 200 ms, a max lifetime of 2 s
		tick, lifetime = 200*time.Millisecond, 2*time.Second
	}
	client, err := rsocket.Connect().
		DataMimeType("text/plain").
		MetadataMimeType("application/octet-stream").
		KeepAlive(tick, lifetime, 1).
		Transport(rsocket.TCPClient().SetHostAndPort(target.Hostname(), port).Build()).
		Start(ctx)
	if err != nil {
		fmt.Println("error connect:", err)
		os.Exit(1)
	}
	lines := tc.perform(ctx, client)
	fmt.Println(strings.Join(lines, "\n"))
	_ = client.Close()
	if !reflect.DeepEqual(lines, tc.expected) {
		os.Exit(1)
	}
}
