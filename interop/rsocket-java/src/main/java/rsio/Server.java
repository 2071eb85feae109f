// rsocket-java 1.1.5 (io.rsocket:rsocket-core, rsocket-transport-netty) serving the kit's RSocket test
// publishers (bindings.md section 2).
// Usage: server PORT (or RSIO_PORT=PORT); listens on 127.0.0.1 only.
// Shaped like every interop server: parse the publisher name, one Flux of elements per publisher, then one
// handler per interaction. Request-stream returns a Reactor Flux, which emits only what the requester asked.
package rsio;

import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketServer;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.DefaultPayload;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

public final class Server {
  static final Map<String, List<String>> PARAMS = Map.of(
      "tck/range", List.of("start", "count"), "tck/infinite", List.of("start"),
      "tck/error", List.of("after", "message"), "tck/large", List.of("size", "count", "part"),
      "tck/fnf", List.of("key"), "tck/fnf-count", List.of("key"), "tck/echo", List.of());
  static final Map<String, AtomicLong> FNF_COUNTS = new ConcurrentHashMap<>(); // per key, whole server

  /** tck/error's onError, or an unknown or malformed name: sent as ERROR[APPLICATION_ERROR]. */
  static final class PublisherError extends RuntimeException {
    PublisherError(String message) {
      super(message);
    }
  }

  record Name(String path, Map<String, String> params) {}

  /** 'tck/range?start=1&count=2' -> (tck/range, {start=1, count=2}); PublisherError if not served. */
  static Name parseName(String text) {
    int q = text.indexOf('?');
    String path = q < 0 ? text : text.substring(0, q);
    if (!PARAMS.containsKey(path)) throw new PublisherError("no test publisher '" + path + "'");
    Map<String, String> params = new HashMap<>();
    if (q >= 0 && q + 1 < text.length()) {
      for (String pair : text.substring(q + 1).split("&", -1)) {
        int eq = pair.indexOf('=');
        String key = eq < 0 ? pair : pair.substring(0, eq);
        if (eq < 0 || !PARAMS.get(path).contains(key) || params.containsKey(key)) {
          throw new PublisherError("bad parameter '" + pair + "' for " + path);
        }
        params.put(key, URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return new Name(path, params);
  }

  static long number(Map<String, String> params, String key, String fallback) {
    String value = params.getOrDefault(key, fallback);
    if (value == null || !value.matches("-?\\d+")) {
      throw new PublisherError("parameter " + key + "=" + value + " is not an integer");
    }
    return Long.parseLong(value);
  }

  /** tck/large element {@code index}: byte j is (index + j) mod 256. */
  static byte[] largeElement(long index, int size) {
    byte[] bytes = new byte[size];
    for (int j = 0; j < size; j++) bytes[j] = (byte) ((index + j) % 256);
    return bytes;
  }

  static byte[] text(long i) {
    return Long.toString(i).getBytes(StandardCharsets.UTF_8);
  }

  /** The publisher's elements as a Flux of bytes; parameters are checked before it is returned. */
  static Flux<byte[]> elements(Name name) {
    Map<String, String> p = name.params();
    switch (name.path()) {
      case "tck/range": {
        long start = number(p, "start", "0"), count = number(p, "count", "0");
        return Flux.range(0, (int) count).map(i -> text(start + i));
      }
      case "tck/infinite": {
        long start = number(p, "start", "0");
        return Flux.generate(() -> start, (i, sink) -> { sink.next(text(i)); return i + 1; });
      }
      case "tck/large": {
        int size = (int) number(p, "size", null);
        long count = number(p, "count", "0");
        return Flux.range(0, (int) count).map(i -> largeElement(i, size));
      }
      case "tck/error": {
        long after = number(p, "after", "0");
        String message = p.getOrDefault("message", "failed");
        return Flux.range(0, (int) after).map(i -> text(i)).concatWith(Mono.error(new PublisherError(message)));
      }
      default:
        throw new PublisherError(name.path() + " is not a request-stream publisher");
    }
  }

  static final class Handler implements RSocket {
    @Override
    public Flux<Payload> requestStream(Payload payload) {
      try {
        // Produced off the connection's event loop: rsocket-java calls request(n) on it, and a synchronous
        // source given a large demand would otherwise hold it until that demand is spent, so that neither this
        // stream's CANCEL nor the other connections on the loop are read (Reactive Streams 3.4).
        return elements(parseName(payload.getDataUtf8())).map(DefaultPayload::create).subscribeOn(Schedulers.parallel());
      } catch (PublisherError e) {
        return Flux.error(e);
      }
    }

    @Override
    public Mono<Payload> requestResponse(Payload payload) {
      try {
        Name name = parseName(payload.getDataUtf8());
        if (name.path().equals("tck/fnf-count")) {
          long count = FNF_COUNTS.computeIfAbsent(name.params().getOrDefault("key", ""), k -> new AtomicLong()).get();
          return Mono.just(DefaultPayload.create(Long.toString(count)));
        }
        return elements(name).next().map(DefaultPayload::create); // empty publisher: empty completion
      } catch (PublisherError e) {
        return Mono.error(e);
      }
    }

    @Override
    public Mono<Void> fireAndForget(Payload payload) {
      Name name = parseName(payload.getDataUtf8());
      if (name.path().equals("tck/fnf")) {
        FNF_COUNTS.computeIfAbsent(name.params().getOrDefault("key", ""), k -> new AtomicLong()).incrementAndGet();
      }
      return Mono.empty();
    }

    @Override
    public Flux<Payload> requestChannel(Publisher<Payload> payloads) {
      // The first inbound payload is the name; every later one goes back out. Demand flows through.
      return Flux.from(payloads).switchOnFirst((first, inbound) -> {
        if (first.hasValue() && !"tck/echo".equals(first.get().getDataUtf8())) {
          return Flux.error(new PublisherError("no channel publisher '" + first.get().getDataUtf8() + "'"));
        }
        return inbound.skip(1).map(p -> DefaultPayload.create(p.getDataUtf8()));
      });
    }

    @Override
    public Mono<Void> metadataPush(Payload payload) {
      return Mono.empty(); // ignored: the connection stays up
    }
  }

  public static void main(String[] args) {
    int port = Integer.parseInt(args.length > 0 ? args[0] : System.getenv("RSIO_PORT"));
    var server = RSocketServer.create(SocketAcceptor.with(new Handler()))
        .bind(TcpServerTransport.create("127.0.0.1", port))
        .block();
    System.out.println("rsocket-java server listening on 127.0.0.1:" + port);
    server.onClose().block();
  }
}
