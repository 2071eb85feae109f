// rsocket-go v0.8.16 serving the kit's RSocket test publishers (bindings.md section 2). server PORT (or RSIO_PORT=PORT).
// Like every interop server: parse the name, one generator per publisher, one handler per interaction. Request-stream
// is flux.Create, as in rsocket-go's examples: its buffered sink sends only what was requested, blocking the generator.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"math/big"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rsocket/rsocket-go"
	"github.com/rsocket/rsocket-go/payload"
	"github.com/rsocket/rsocket-go/rx/flux"
	"github.com/rsocket/rsocket-go/rx/mono"
)

var params = map[string][]string{
	"tck/range": {"start", "count"}, "tck/infinite": {"start"}, "tck/error": {"after", "message"},
	"tck/large": {"size", "count", "part"}, "tck/fnf": {"key"}, "tck/fnf-count": {"key"}, "tck/echo": {},
}

var fnfCounts sync.Map // key -> *atomic.Int64: fire-and-forget calls per key, for the whole server
func fnfCount(key string) *atomic.Int64 {
	count, _ := fnfCounts.LoadOrStore(key, new(atomic.Int64))
	return count.(*atomic.Int64)
}

// parseName: "tck/range?start=1&count=2" -> ("tck/range", {start: [1], count: [2]}); an error if not served.
func parseName(text string) (string, url.Values, error) {
	path, query, _ := strings.Cut(text, "?")
	allowed, ok := params[path]
	if !ok {
		return "", nil, fmt.Errorf("no test publisher '%s'", path)
	}
	values, err := url.ParseQuery(query)
	for key, value := range values {
		if len(value) != 1 || !slices.Contains(allowed, key) {
			err = fmt.Errorf("bad parameter '%s' for %s", key, path)
		}
	}
	return path, values, err
}

func number(p url.Values, key, fallback string) (int64, error) {
	value := cmp.Or(p.Get(key), fallback)
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parameter %s=%s is not an integer", key, value)
	}
	return n, nil
}

// largeElement: tck/large element index, byte j is (index + j) mod 256.
func largeElement(index int64, size int64) []byte {
	out := make([]byte, size)
	for j := range out {
		out[j] = byte((index + int64(j)) % 256)
	}
	return out
}

// generator pushes the publisher's elements to emit until emit returns false; tck/error returns its error.
type generator func(emit func([]byte) bool) error

// elements checks the name's parameters and returns its generator.
func elements(path string, p url.Values) (generator, error) {
	text := func(i int64) []byte { return []byte(strconv.FormatInt(i, 10)) }
	start, err1 := number(p, "start", "0")
	count, err2 := number(p, "count", "0")
	switch path {
	case "tck/infinite": // without end, past 2^63-1 too (big.Int: an int64 would stop or wrap there)
		return func(emit func([]byte) bool) error {
			for i := big.NewInt(start); emit([]byte(i.String())); i.Add(i, big.NewInt(1)) {
			}
			return nil
		}, err1
	case "tck/range":
		return func(emit func([]byte) bool) error {
			for i := start; i-start < count && emit(text(i)); i++ {
			}
			return nil
		}, errors.Join(err1, err2)
	case "tck/large":
		size, err := number(p, "size", "")
		return func(emit func([]byte) bool) error {
			for i := int64(0); i < count && emit(largeElement(i, size)); i++ {
			}
			return nil
		}, errors.Join(err, err2)
	case "tck/error":
		after, err := number(p, "after", "0")
		message := cmp.Or(p.Get("message"), "failed")
		return func(emit func([]byte) bool) error {
			for i := int64(0); i < after; i++ {
				if !emit(text(i)) {
					return nil
				}
			}
			return errors.New(message)
		}, err
	}
	return nil, fmt.Errorf("%s is not a request-stream publisher", path)
}

// name copies the request's data: DataUTF8 aliases the frame's pooled buffer, reused after the handler (K15).
func name(request payload.Payload) string { return strings.Clone(request.DataUTF8()) }

func requestStream(request payload.Payload) flux.Flux {
	path, p, err := parseName(name(request))
	gen, err2 := elements(path, p)
	if err := cmp.Or(err, err2); err != nil {
		return flux.Error(err)
	}
	return flux.Create(func(ctx context.Context, sink flux.Sink) {
		err := gen(func(data []byte) bool {
			cancelled := ctx.Err() != nil // cancelled: stop producing
			if !cancelled {
				sink.Next(payload.New(data, nil))
			}
			return !cancelled
		})
		if err != nil {
			sink.Error(err)
		} else if ctx.Err() == nil {
			sink.Complete()
		}
	})
}

func requestResponse(request payload.Payload) mono.Mono {
	path, p, err := parseName(name(request))
	if err == nil && path == "tck/fnf-count" {
		return mono.Just(payload.New([]byte(strconv.FormatInt(fnfCount(p.Get("key")).Load(), 10)), nil))
	}
	gen, err2 := elements(path, p)
	if err := cmp.Or(err, err2); err != nil {
		return mono.Error(err)
	}
	var first []byte
	if err := gen(func(data []byte) bool { first = data; return false }); err != nil {
		return mono.Error(err)
	} else if first == nil {
		return mono.Empty() // empty publisher: empty completion
	}
	return mono.Just(payload.New(first, nil))
}

func fireAndForget(request payload.Payload) {
	if path, p, err := parseName(name(request)); err == nil && path == "tck/fnf" {
		fnfCount(p.Get("key")).Add(1)
	}
}

// requestChannel (tck/echo): the first inbound payload is the name, later ones come back; filtered and
// mapped, the inbound Flux passes the requester's demand through; Clone keeps a payload past the pool.
func requestChannel(requests flux.Flux) flux.Flux {
	first := true
	return requests.
		DoOnNext(func(in payload.Payload) error {
			if first && in.DataUTF8() != "tck/echo" {
				return fmt.Errorf("no channel publisher '%s'", in.DataUTF8())
			}
			return nil
		}).
		Filter(func(payload.Payload) bool { isName := first; first = false; return !isName }).
		Map(func(in payload.Payload) (payload.Payload, error) { return payload.Clone(in), nil })
}

func main() {
	os.Args = append(os.Args, os.Getenv("RSIO_PORT")) // the port: argument 1, else RSIO_PORT
	port, err := strconv.Atoi(os.Args[1])
	if err != nil {
		log.Fatalf("usage: server PORT (or RSIO_PORT): %v", err)
	}
	err = rsocket.Receive().
		OnStart(func() { fmt.Printf("rsocket-go server listening on 127.0.0.1:%d\n", port) }).
		Acceptor(func(ctx context.Context, setup payload.SetupPayload, socket rsocket.CloseableRSocket) (rsocket.RSocket, error) {
			return rsocket.NewAbstractSocket(
				rsocket.RequestStream(requestStream),
				rsocket.RequestResponse(requestResponse),
				rsocket.FireAndForget(fireAndForget),
				rsocket.RequestChannel(requestChannel),
				rsocket.MetadataPush(func(payload.Payload) {}), // ignored: the connection stays up
			), nil
		}).
		Transport(rsocket.TCPServer().SetHostAndPort("127.0.0.1", port).Build()).
		Serve(context.Background())
	log.Fatalln(err)
}
