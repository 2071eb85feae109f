// rsocket-java 1.1.5 performing the client test cases of interop/testcases.json.
// Usage: RSIO_URL=tcp://127.0.0.1:PORT RSIO_TESTCASE=NAME client
// Prints one line per signal ('next TEXT', 'complete', 'error TEXT'); exits 0 when the test case went as
// expected, 1 when not, 127 for a test case it does not support.
package rsio;

import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.util.DefaultPayload;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

public final class Client {
  static final Duration TIMEOUT = Duration.ofSeconds(10); // for a whole test case

  static String show(byte[] data) {
    return data.length > 64 ? "next " + data.length + " bytes" : "next " + new String(data);
  }

  static String largeCheck(int index, byte[] data) {
    boolean good = true;
    for (int j = 0; j < data.length; j++) good &= data[j] == (byte) ((index + j) % 256);
    return "next " + data.length + " bytes " + (good ? "ok" : "BAD");
  }

  /** Requests {@code initial}, then {@code batch} more after each {@code batch} elements; cancels after {@code take}. */
  static final class PrintingSubscriber extends BaseSubscriber<Payload> {
    final int initial, batch, take;
    final boolean check;
    final List<String> lines = new ArrayList<>();
    final Sinks.One<List<String>> done = Sinks.one();
    int count;

    PrintingSubscriber(int initial, int batch, int take, boolean check) {
      this.initial = initial; this.batch = batch; this.take = take; this.check = check;
    }

    @Override protected void hookOnSubscribe(Subscription subscription) {
      request(initial);
    }

    @Override protected void hookOnNext(Payload p) {
      byte[] data = new byte[p.data().readableBytes()];
      p.data().readBytes(data);
      p.release();
      lines.add(check ? largeCheck(count, data) : show(data));
      count++;
      if (take > 0 && count == take) {
        cancel();
        done.tryEmitValue(lines);
      } else if (batch > 0 && count % batch == 0) {
        request(batch);
      }
    }

    @Override protected void hookOnComplete() {
      lines.add("complete");
      done.tryEmitValue(lines);
    }

    @Override protected void hookOnError(Throwable e) {
      lines.add("error " + e.getMessage());
      done.tryEmitValue(lines);
    }
  }

  static Payload payload(String text) {
    return DefaultPayload.create(text);
  }

  static List<String> consume(Flux<Payload> flux, int initial, int batch, int take, boolean check) {
    PrintingSubscriber subscriber = new PrintingSubscriber(initial, batch, take, check);
    flux.subscribe(subscriber);
    List<String> lines = subscriber.done.asMono().block(TIMEOUT);
    if (take > 0) Mono.delay(Duration.ofMillis(500)).block(); // elements after the cancel would show up here
    return lines;
  }

  static List<String> response(RSocket socket, String name) {
    return List.of(socket.requestResponse(payload(name))
        .map(p -> show(p.getDataUtf8().getBytes()))
        .onErrorResume(e -> Mono.just("error " + e.getMessage()))
        .block(TIMEOUT));
  }

  /** Asks tck/fnf-count?key=interop until it answers want, at most 10 times, 0.2 s apart: a responder may
   * handle fire-and-forgets asynchronously, and nothing acknowledges them (interop/testcases.json). */
  static List<String> countOf(RSocket socket, String want) {
    List<String> lines = response(socket, "tck/fnf-count?key=interop");
    for (int attempt = 1; attempt < 10 && !lines.get(0).equals(want); attempt++) {
      Mono.delay(Duration.ofMillis(200)).block(TIMEOUT); // the poll's interval: the count changes unannounced
      lines = response(socket, "tck/fnf-count?key=interop");
    }
    return lines;
  }

  static final List<String> RANGE10 = IntStream.range(0, 10).mapToObj(i -> "next " + i).collect(Collectors.toList());

  static List<String> plus(List<String> lines, String... more) {
    return Stream.concat(lines.stream(), Stream.of(more)).collect(Collectors.toList());
  }

  static final Map<String, Map.Entry<Function<RSocket, List<String>>, List<String>>> TESTCASES = Map.of(
      "stream-range", Map.entry(s -> consume(s.requestStream(payload("tck/range?count=10")), 3, 3, 0, false),
          plus(RANGE10, "complete")),
      "request-response", Map.entry(s -> response(s, "tck/range?start=7&count=1"), List.of("next 7")),
      "fnf", Map.entry(s -> {
        for (int i = 0; i < 3; i++) s.fireAndForget(payload("tck/fnf?key=interop")).block(TIMEOUT);
        return countOf(s, "next 3");
      }, List.of("next 3")),
      "channel-echo", Map.entry(s -> consume(s.requestChannel(Flux.just("tck/echo", "a", "b", "c").map(Client::payload)),
          1, 1, 0, false), List.of("next a", "next b", "next c", "complete")),
      "cancel-infinite", Map.entry(s -> consume(s.requestStream(payload("tck/infinite")), 5, 0, 5, false),
          RANGE10.subList(0, 5)),
      "large-fragmented", Map.entry(s -> consume(s.requestStream(payload("tck/large?size=100000&count=3")), 3, 0, 0, true),
          List.of("next 100000 bytes ok", "next 100000 bytes ok", "next 100000 bytes ok", "complete")),
      "error", Map.entry(s -> consume(s.requestStream(payload("tck/error?after=2")), 10, 0, 0, false),
          List.of("next 0", "next 1", "error failed")),
      "keepalive", Map.entry(s -> { // idle past the max lifetime (main's SETUP): keepalives alone keep it up
        Mono.delay(Duration.ofMillis(2500)).block(TIMEOUT);
        return response(s, "tck/range?start=7&count=1");
      }, List.of("next 7")),
      "metadata-push", Map.entry(s -> {
        s.metadataPush(DefaultPayload.create(new byte[0], "tck".getBytes())).block(TIMEOUT);
        return response(s, "tck/range?count=1");
      }, List.of("next 0")));

  public static void main(String[] args) {
    String name = System.getenv().getOrDefault("RSIO_TESTCASE", "");
    if (!TESTCASES.containsKey(name)) {
      System.err.println("unsupported test case '" + name + "'");
      System.exit(127);
    }
    URI url = URI.create(System.getenv("RSIO_URL"));
    boolean keepalive = name.equals("keepalive"); // keepalive: every 200 ms, a max lifetime of 2 s
    RSocket socket = RSocketConnector.create()
        .dataMimeType("text/plain")
        .metadataMimeType("application/octet-stream")
        .keepAlive(keepalive ? Duration.ofMillis(200) : Duration.ofSeconds(30),
            keepalive ? Duration.ofSeconds(2) : Duration.ofSeconds(90))
        .connect(TcpClientTransport.create(url.getHost(), url.getPort()))
        .block(TIMEOUT);
    List<String> lines = TESTCASES.get(name).getKey().apply(socket);
    System.out.println(lines == null ? "timeout" : String.join("\n", lines));
    socket.dispose();
    System.exit(TESTCASES.get(name).getValue().equals(lines) ? 0 : 1);
  }
}
