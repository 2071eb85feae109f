// rsocket-go v0.8.16 serving the kit's RSocket test publishers (bindings.md section 2). server PORT (or RSIO_PORT=PORT).
// Parse the name, one publisher per name, one handler per interaction; request-stream is flux.Create (rsocket-go's examples).
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
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("parameter %s=%s is not an integer", key, value)
}

// publisher: a request-stream test publisher's elements (count < 0: without end), then its failure or completion.
type publisher struct {
	count   int64
	element func(i int64) []byte
	failure error
}

// publish checks the name's parameters and returns its publisher.
func publish(path string, p url.Values) (publisher, error) {
	text := func(i int64) []byte { return []byte(strconv.FormatInt(i, 10)) }
	start, err1 := number(p, "start", "0")
	count, err2 := number(p, "count", "0")
	switch path {
	case "tck/infinite": // without end, past 2^63-1 too (big.Int: an int64 would stop or wrap there)
		return publisher{-1, func(i int64) []byte {
			return []byte(new(big.Int).Add(big.NewInt(start), big.NewInt(i)).String())
		}, nil}, err1
	case "tck/range":
		return publisher{max(count, 0), func(i int64) []byte { return text(start + i) }, nil}, errors.Join(err1, err2)
	case "tck/large": // byte j of element i is (i + j) mod 256
		size, err := number(p, "size", "")
		return publisher{max(count, 0), func(i int64) []byte {
			out := make([]byte, size)
			for j := range out {
				out[j] = byte((i + int64(j)) % 256)
			}
			return out
		}, nil}, errors.Join(err, err2)
	case "tck/error":
		after, err := number(p, "after", "0")
		return publisher{max(after, 0), text, errors.New(cmp.Or(p.Get("message"), "failed"))}, err
	}
	return publisher{}, fmt.Errorf("%s is not a request-stream publisher", path)
}

// name copies the request's data: DataUTF8 aliases the frame's pooled buffer, reused after the handler (K15).
func name(request payload.Payload) string { return strings.Clone(request.DataUTF8()) }

// requestStream makes each element for a credit (DoOnRequest counts them) and hands it to flux.Create's sink, whose
// Error does not wait for elements it holds: a failure goes out from DoOnNext, after the last (K18, once F6).
func requestStream(request payload.Payload) flux.Flux {
	path, p, err := parseName(name(request))
	pub, err2 := publish(path, p)
	if err := cmp.Or(err, err2); err != nil {
		return flux.Error(err)
	}
	var credit, sent atomic.Int64 // requested and not yet made; passed on by the sink
	var cancelled atomic.Bool     // a CANCEL, or the connection's end
	wake := make(chan struct{}, 1)
	poke := func() { // a credit or the cancel: wake the generator if it waits
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	created := flux.Create(func(ctx context.Context, sink flux.Sink) {
		for i := int64(0); pub.count < 0 || i < pub.count; i++ {
			for credit.Load() <= 0 && !cancelled.Load() {
				<-wake
			}
			if cancelled.Load() { // looked at before every element: under a large credit it never waits above
				return
			}
			credit.Add(-1)
			sink.Next(payload.New(pub.element(i), nil))
		}
		if pub.failure == nil {
			sink.Complete() // it waits until the sink has sent every element
		} else if pub.count == 0 {
			sink.Error(pub.failure)
		}
	}).DoOnRequest(func(n int) {
		credit.Add(int64(n))
		poke()
	}).DoOnNext(func(payload.Payload) error {
		if sent.Add(1) == pub.count {
			return pub.failure // nil but for tck/error: its error, once its last element is on its way
		}
		return nil
	})
	return flux.Raw(created.Raw().DoOnCancel(func() { cancelled.Store(true); poke() }))
}

func requestResponse(request payload.Payload) mono.Mono {
	path, p, err := parseName(name(request))
	if err == nil && path == "tck/fnf-count" {
		return mono.Just(payload.New([]byte(strconv.FormatInt(fnfCount(p.Get("key")).Load(), 10)), nil))
	}
	pub, err2 := publish(path, p)
	if err := cmp.Or(err, err2); err != nil {
		return mono.Error(err)
	} else if pub.count != 0 {
		return mono.Just(payload.New(pub.element(0), nil))
	} else if pub.failure != nil {
		return mono.Error(pub.failure)
	}
	return mono.Empty() // empty publisher: empty completion
}

func fireAndForget(request payload.Payload) {
	if path, p, err := parseName(name(request)); err == nil && path == "tck/fnf" {
		fnfCount(p.Get("key")).Add(1)
	}
}

// requestChannel (tck/echo): the first payload is the name, later ones come back (demand passes through; Clone: past the pool).
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
